// The refusals table: the spec's messages exactly as docs/spec.md §7 lists them, and the reason an owner reads
// for a stored rejection (rows keep status and message, so old rows are read by their message).
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REFUSALS, rejectionReason, SUCCESS_MESSAGE } from '../../../src/events/request/refusals.ts';

const spec = fs.readFileSync(new URL('../../../docs/spec.md', import.meta.url), 'utf8');
const errorsSection = spec.slice(spec.indexOf('## 7. Errors'), spec.indexOf('## 8.'));

describe('refusals', () => {
  it('answers every error of the spec with its status and exact message', () => {
    const rows = [...errorsSection.matchAll(/^\| (\d{3}) \|[^|]*\| .*?`message`: (.+?) \|$/gm)].map(
      ([, status, message]) => ({ status: Number(status), message: message!.trim() }),
    );
    expect(rows).toHaveLength(7);
    const table = Object.values(REFUSALS).map(({ status, message }) => ({ status, message }));
    for (const row of rows) expect(table).toContainEqual(row);
    expect(errorsSection).toContain(`\`message\`: ${SUCCESS_MESSAGE}`);
  });

  it('tells the owner a stored rejection by its own reason, else by its message', () => {
    expect(rejectionReason({ message: 'The domain name does not match.', reason: null })).toBe('domain mismatch');
    expect(rejectionReason({ message: 'Too many requests. Try again later.' })).toBe('rate limited');
    expect(
      rejectionReason({
        message: 'Too many requests. Try again later.',
        reason: 'daily event quota reached (5 events)',
      }),
    ).toBe('daily event quota reached (5 events)');
    expect(rejectionReason({ message: 'Something the table does not know.' })).toBe(
      'Something the table does not know.',
    );
  });
});
