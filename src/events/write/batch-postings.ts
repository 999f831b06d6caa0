// A batch's funnel postings, joined from its requests' records (src/events/write/funnel-posting-format.ts writes a request's) into
// one row per app, step and day, as the event insert takes them: the chunks are copied once, never decoded.
import { JsonTuple } from '../../db/json-tuples.ts';
import type { NamedValues } from '../../db/named-sql.ts';
import { chunkEnd, DAY_BYTES } from './funnel-posting-format.ts';
import type { GatheredBatch } from './rollups/gathering.ts';

/** a step and day's chunks of a batch: where each is, as [source, start, end] triples */
interface PostingGroup {
  appId: number;
  /** the step's name and the day, as the records hold them */
  stepAndDay: Buffer;
  chunks: number[];
  bytes: number;
}

/** a batch's postings by app, step and day, gathered from its requests' records: where each chunk is, not copied */
export class BatchPostings implements GatheredBatch {
  /** the requests' postings, each once */
  private readonly sources: Buffer[] = [];
  /** in the order met, and by app, then by the step's name and the day as the records hold them (read as latin1) */
  private readonly groups: PostingGroup[] = [];
  private readonly byApp = new Map<number, Map<string, PostingGroup>>();

  /** adds a request's postings (encodeRequestPostings) */
  add(appId: number, postings: Buffer): void {
    const source = this.sources.push(postings) - 1;
    let groups = this.byApp.get(appId);
    if (!groups) this.byApp.set(appId, (groups = new Map()));
    for (let at = 0; at < postings.length; ) {
      const chunkStart = at + 2 + postings.readUInt16BE(at) + DAY_BYTES;
      const end = chunkEnd(postings, chunkStart);
      const key = postings.toString('latin1', at, chunkStart);
      let group = groups.get(key);
      if (!group) {
        group = { appId, stepAndDay: postings.subarray(at, chunkStart), chunks: [], bytes: 0 };
        groups.set(key, group);
        this.groups.push(group);
      }
      group.chunks.push(source, chunkStart, end);
      group.bytes += end - chunkStart;
      at = end;
    }
  }

  /**
   * The event insert's parameters: a JSON array of [app id, step, day, start, length], one per row, and every row's
   * entries joined as bytes (a row's from its start byte on): the entries travel as they are, not as text to decode
   */
  toParams(): BatchPostingParams {
    const groups: [number, string, string, number, number][] = [];
    let total = 0;
    for (const group of this.groups) total += group.bytes;
    const entries = Buffer.allocUnsafe(total);
    let start = 0;
    for (const { appId, stepAndDay, chunks, bytes } of this.groups) {
      let at = start;
      for (let i = 0; i < chunks.length; i += 3)
        at += this.sources[chunks[i]!]!.copy(entries, at, chunks[i + 1], chunks[i + 2]);
      groups.push([
        appId,
        stepAndDay.toString('utf8', 2, stepAndDay.length - DAY_BYTES),
        stepAndDay.toString('latin1', stepAndDay.length - DAY_BYTES),
        start,
        bytes,
      ]);
      start += bytes;
    }
    return { groups: JSON.stringify(groups), entries };
  }

  /** the event insert's parameters posting_groups and posting_entries */
  values(): NamedValues {
    const { groups, entries } = this.toParams();
    return { posting_groups: groups, posting_entries: entries };
  }
}

/** a postings row of a batch: its app, step and day, and where its entries are in the batch's entries */
export const POSTING_GROUP = new JsonTuple([
  { name: 'app_id', kind: 'int' },
  { name: 'step', kind: 'text' },
  { name: 'day', kind: 'date' },
  { name: 'start', kind: 'int' },
  { name: 'length', kind: 'int' },
] as const);

/** a batch's funnel postings as the event insert takes them (BatchPostings.toParams) */
export interface BatchPostingParams {
  /** a JSON array of [app id, step, day, start, length]: each row's entries at entries[start, start + length) */
  groups: string;
  entries: Buffer;
}
