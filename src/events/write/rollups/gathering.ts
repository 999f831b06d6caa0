// What a pre-aggregated rollup gathers at ingest: a section of each request's durable-log record, the merge of a
// batch's sections into the event insert's parameters, and the statement input that reads them.
import type { NamedValues } from '../../../db/named-sql.ts';
import type { EventRow } from '../event-columns.ts';

/** a batch's sections of one gathering, merged as the loader adds its records */
export interface GatheredBatch {
  /** adds a request's section (as its gathering encoded it, or as an earlier version of it did) */
  add(appId: number, section: Buffer): void;
  /** the event insert's named parameters this gathering fills */
  values(): NamedValues;
}

export interface Gathering {
  /** the section's name in a log record's header: letters and underscores, never changed once records hold it */
  section: string;
  /** a request's section (one app's rows); `insights`: whether the store keeps the insights */
  encode(rows: EventRow[], insights: boolean): Buffer;
  /** an empty merge of a batch's sections */
  batch(): GatheredBatch;
  /**
   * CTEs the statement's rollups read the gathered values through (a batch is stored whole, so they describe
   * exactly the rows inserted: src/events/write/insert-statement.ts)
   */
  inputSql?: string;
  /** what bench/insights-load.ts measured it to pay */
  pays: string;
}

/** A batch's sections of each of a store's gatherings, merged: what the event insert takes as `gathered`. */
export class GatheredSections {
  private readonly batches: GatheredBatch[];

  constructor(private readonly gatherings: readonly Gathering[]) {
    this.batches = gatherings.map((gathering) => gathering.batch());
  }

  /** adds a request's section of each gathering, as `sectionOf` gives it */
  add(appId: number, sectionOf: (gathering: Gathering) => Buffer): void {
    this.gatherings.forEach((gathering, place) => this.batches[place]!.add(appId, sectionOf(gathering)));
  }

  /** the event insert's named parameters of every gathering */
  values(): NamedValues {
    return Object.assign({}, ...this.batches.map((batch) => batch.values()));
  }
}
