// A request's record in the durable log: its header names each section the pre-aggregated rollups gather, a batch of
// records merges them by section into the event insert's parameters, and records written by earlier versions (two
// unnamed sections, or none) or for a store without the insights still load with every section their store needs.
import { describe, expect, it } from 'vitest';
import type { Utf8Text } from '../../../src/db/sql.ts';
import type { EventBatch } from '../../../src/events/write/insert-statement.ts';
import { batchOf, decodeRequest, encodeRequest } from '../../../src/events/write/log-record.ts';
import { gatheringsOf } from '../../../src/events/write/rollups/index.ts';
import { NUMBERED_DAY as DAY, numberedRow as row } from '../../helpers/events.ts';

const customEventsOf = (batch: EventBatch) =>
  JSON.parse((batch.gathered.custom_events as Utf8Text).bytes.toString('utf8')) as unknown[];
const usersOf = (batch: EventBatch) => batch.gathered.users as string;
const postingEntriesOf = (batch: EventBatch) => batch.gathered.posting_entries as Buffer | undefined;

describe('a log record', () => {
  it('names each section in its header, in the order the rollups gather them', () => {
    const rows = [row(1, 1), row(1, 2)];
    const value = encodeRequest(rows, 200);
    const header = value.toString('latin1', 0, value.indexOf(0x0a));
    expect(header).toMatch(/^1 \d+ 2 200 summary=\d+ postings=\d+$/);
    expect([...decodeRequest(value).sections.keys()]).toEqual(gatheringsOf(true).map((gathering) => gathering.section));
  });

  it('written with two unnamed section lengths (postings, then summary) loads as the same batch', () => {
    const rows = [row(1, 1), row(1, 2, { eventName: 'app-init' })];
    const current = decodeRequest(encodeRequest(rows, 200));
    const [postings, summary] = [current.sections.get('postings')!, current.sections.get('summary')!];
    const unnamed = Buffer.concat([
      Buffer.from(`1 ${current.receivedAt} 2 200 ${postings.length} ${summary.length}\n`, 'latin1'),
      postings,
      summary,
      current.rows,
    ]);
    const earlier = decodeRequest(unnamed);
    expect(earlier.sections).toEqual(current.sections);
    expect(batchOf([earlier]).gathered).toEqual(batchOf([current]).gathered);
  });

  it('for a store without the insights holds no funnel postings and no custom events, and still its users', () => {
    const rows = [row(1, 1, { props: { custom_data: { name: 'buy', sku: 'a' } } }), row(1, 2)];
    const kept = batchOf([decodeRequest(encodeRequest(rows, 200))]);
    const plainRecord = decodeRequest(encodeRequest(rows, 200, false));
    expect([...plainRecord.sections.keys()]).toEqual(['summary']);
    const plain = batchOf([plainRecord], undefined, false);
    expect(customEventsOf(kept)).toEqual([
      [1, DAY, 'buy', 1, [['sku', 'a', 1]]],
      [1, DAY, '(no name)', 1, [['seq', '2', 1]]],
    ]);
    expect(postingEntriesOf(kept)!.length).toBeGreaterThan(0);
    expect(customEventsOf(plain)).toEqual([]);
    expect(postingEntriesOf(plain)).toBeUndefined();
    // the same users, without the names of their custom events
    expect(usersOf(kept)).toContain('["buy"]');
    expect(usersOf(kept)).toContain('["(no name)"]');
    expect(usersOf(plain)).toBe(usersOf(kept).replace('["buy"]', '[]').replace('["(no name)"]', '[]'));
  });

  it('written without the insights gets its funnel postings from its rows when a store with them loads it', () => {
    const rows = [row(1, 1, { eventName: 'app-init' }), row(1, 2, { props: { custom_data: { name: 'buy' } } })];
    const written = batchOf([decodeRequest(encodeRequest(rows, 200))]);
    const loaded = batchOf([decodeRequest(encodeRequest(rows, 200, false))]);
    expect(postingEntriesOf(loaded)!.length).toBeGreaterThan(0);
    expect(loaded.gathered.posting_groups).toEqual(written.gathered.posting_groups);
    expect(postingEntriesOf(loaded)).toEqual(postingEntriesOf(written));
  });
});

describe('custom events in log records', () => {
  const odd = { name: 'tab\there "quoted"\nnewline', 'prop\\erty': 'émoji 😀 and \t tab', n: 1e21, ok: true };

  it('reach the event insert with every text as it was, merged across records', () => {
    const rows = [row(1, 1, { props: { custom_data: odd } }), row(1, 2, { props: { custom_data: odd } })];
    const batch = batchOf([encodeRequest(rows.slice(0, 1), 100), encodeRequest(rows.slice(1), 100)].map(decodeRequest));
    expect(customEventsOf(batch)).toEqual([
      [
        1,
        DAY,
        odd.name,
        2,
        [
          ['prop\\erty', odd['prop\\erty'], 2],
          ['n', '1000000000000000000000', 2],
          ['ok', 'true', 2],
        ],
      ],
    ]);
  });

  it('of a record written when its summary was one JSON document are merged with those of later records', () => {
    const rows = [row(1, 1, { props: { custom_data: odd } }), row(1, 2, { props: { custom_data: odd } })];
    const current = decodeRequest(encodeRequest(rows.slice(1), 100));
    const earlier = decodeRequest(encodeRequest(rows.slice(0, 1), 100));
    // the summary as such a record held it: [users, [day, name, events, [property, value, events][]][]]
    const [usersLine] = earlier.sections.get('summary')!.toString('utf8').split('\n');
    const earlierSummary = JSON.stringify([
      JSON.parse(usersLine!),
      [
        [
          DAY,
          odd.name,
          1,
          [
            ['prop\\erty', odd['prop\\erty'], 1],
            ['n', '1000000000000000000000', 1],
            ['ok', 'true', 1],
          ],
        ],
      ],
    ]);
    const sections = new Map([...earlier.sections, ['summary', Buffer.from(earlierSummary)]]);
    const both = batchOf([{ ...earlier, sections }, current]);
    const fresh = batchOf([earlier, current]);
    expect(customEventsOf(both)).toEqual(customEventsOf(fresh));
    expect(usersOf(both)).toBe(usersOf(fresh));
  });
});

describe('funnel postings in log records', () => {
  it('name each step as its events do, however many names the requests bring', () => {
    // more names than the service keeps the bytes of: each request names its own steps
    const requests = Array.from({ length: 1_500 }, (_, n) => [
      row(1, 2 * n, { props: { custom_data: { name: `step ${n} ✓` } } }),
      row(1, 2 * n + 1, { eventName: n % 2 ? 'app-init' : 'app-hide' }),
    ]);
    const batch = batchOf(requests.map((rows) => decodeRequest(encodeRequest(rows, 100))));
    const steps = (
      JSON.parse(batch.gathered.posting_groups as string) as [number, string, string, number, number][]
    ).map(([, step, day, , length]) => [step, day, length > 0]);
    expect(steps).toHaveLength(1_502);
    expect(steps).toContainEqual(['custom-event:step 1499 ✓', DAY, true]);
    expect(steps).toContainEqual(['custom-event:step 0 ✓', DAY, true]);
    expect(steps.filter(([step]) => step === 'app-init' || step === 'app-hide')).toHaveLength(2);
  });
});
