// A failure every request meets (a full disk) is said once a minute per cause, with how many happened since.
import { describe, expect, it } from 'vitest';
import { RepeatedFailures } from '../../src/ingest/repeated-failures.ts';

describe('repeated failures', () => {
  it('says the first of a kind at once, counts the rest, and says the count at the next line', () => {
    let now = 0;
    const failures = new RepeatedFailures(60_000, () => now);
    expect(failures.note('disk full')).toBe(1);
    for (let i = 0; i < 500; i++) expect(failures.note('disk full')).toBeNull();
    // another cause is its own line
    expect(failures.note('log full')).toBe(1);
    now = 60_000;
    expect(failures.note('disk full')).toBe(501);
    expect(failures.note('disk full')).toBeNull();
    now = 200_000;
    expect(failures.note('disk full')).toBe(2);
  });
});
