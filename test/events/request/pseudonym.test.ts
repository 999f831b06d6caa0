// Keyed event identities: a retried event with a client time gets the same key, one without gets a new key each
// time, and one app's keys grow with time (what keeps the events primary key appended to rather than written at
// random places).
import { describe, expect, it } from 'vitest';
import { Pseudonymiser } from '../../../src/events/request/pseudonym.ts';
import { Secrets } from '../../../src/tokens/secret.ts';

const pseudonymiser = new Pseudonymiser(new Secrets(Buffer.from('test-secret-'.padEnd(40, 'x'))));
const event = (n: number) => JSON.stringify({ event_name: 'custom-event', user_id: 1, seq: n });

const RECEIVED = 1_795_000_000_500;

describe('event keys', () => {
  it('are the same for the same content, app and client time, and differ otherwise', () => {
    const key = pseudonymiser.eventKey(1, event(1), 1_795_000_000_000, RECEIVED);
    expect(key).toHaveLength(16);
    expect(pseudonymiser.eventKey(1, event(1), 1_795_000_000_000, RECEIVED + 5).equals(key)).toBe(true);
    expect(pseudonymiser.eventKey(1, event(2), 1_795_000_000_000, RECEIVED).equals(key)).toBe(false);
    expect(pseudonymiser.eventKey(2, event(1), 1_795_000_000_000, RECEIVED).equals(key)).toBe(false);
    expect(pseudonymiser.eventKey(1, event(1), 1_795_000_000_001, RECEIVED).equals(key)).toBe(false);
  });

  it('sort by client time within an app, whatever the content', () => {
    const times = [0, 1, 999, 1_000_000_000_000, 1_795_000_000_000, 1_795_000_000_001, 2 ** 48 - 1];
    const keys = times.map((time, n) => pseudonymiser.eventKey(7, event(1000 - n), time, RECEIVED));
    for (let i = 1; i < keys.length; i++) expect(Buffer.compare(keys[i - 1]!, keys[i]!)).toBe(-1);
  });

  it('keep content apart when the client time is out of their range', () => {
    const keys = [-5, 2 ** 48, Number.MAX_SAFE_INTEGER].flatMap((time) =>
      [1, 2].map((n) => pseudonymiser.eventKey(7, event(n), time, RECEIVED)),
    );
    expect(new Set(keys.map((key) => key.toString('hex'))).size).toBe(2);
    for (const key of keys) expect(key.readUIntBE(0, 6)).toBe(0);
  });

  it('never repeat for the same content without a client time, and start with the receive time', () => {
    const keys = Array.from({ length: 1000 }, () => pseudonymiser.eventKey(7, event(1), null, RECEIVED));
    expect(new Set(keys.map((key) => key.toString('hex'))).size).toBe(keys.length);
    for (const key of keys) expect(key.readUIntBE(0, 6)).toBe(RECEIVED);
  });
});
