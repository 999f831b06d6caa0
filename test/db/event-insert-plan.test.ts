// The event insert is planned once per connection, on both engines: every batch runs the one generic plan, where
// PostgreSQL left to choose plans it anew for each batch (and parses the batch once more to do so) as soon as its
// estimates favour the parameters' values.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedDatabase } from '../../src/db/embedded/index.ts';
import { openServerDatabase } from '../../src/db/server.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { MAX_CUSTOM_VALUES } from '../../src/events/custom-events.ts';
import { SqlEventPlane } from '../../src/events/write/event-plane.ts';
import { eventRow } from '../helpers/events.ts';
import { available } from '../helpers/environment.ts';
import { embeddedDataDir, migratedDatabase } from '../helpers/stores.ts';

/** one session each, so the prepared statement's counters are the session's own */
const ENGINES: { name: string; open(): Promise<{ sql: SqlRunner; cleanup(): Promise<void> }> }[] = [
  {
    name: 'embedded PGlite',
    open: async () => {
      const { sql } = await openEmbeddedDatabase(await embeddedDataDir());
      return { sql, cleanup: () => sql.close() };
    },
  },
  ...((await available('PostgreSQL'))
    ? [
        {
          name: 'PostgreSQL',
          open: async () => {
            const database = await migratedDatabase();
            const sql = openServerDatabase(database.url, { max: 1 });
            return { sql, cleanup: () => sql.close().then(() => database.drop()) };
          },
        },
      ]
    : []),
];

/** a new app's id, named `${name}_app` */
async function newApp(sql: SqlRunner, name: string): Promise<number> {
  const [row] = await sql.query<{ id: number }>(
    `INSERT INTO apps (app_name, bot, domains, updated_at)
     VALUES ('${name}_app', '@${name}_bot', '{${name}.example}', now()) RETURNING id`,
  );
  return row!.id;
}

/** `count` custom events of 4 names and `skus` values of one property, taking turns */
const purchases = (appId: number, count: number, skus: number) =>
  Array.from({ length: count }, (_, n) =>
    eventRow(appId, {
      eventName: 'custom-event',
      props: { custom_data: { name: `buy_${n % 4}`, sku: `sku_${n % skus}` } },
    }),
  );

/** the index scans of the custom event catalog so far, in the session's view */
async function catalogProbes(sql: SqlRunner): Promise<number> {
  await sql.query('SELECT pg_stat_force_next_flush()');
  await sql.query('SELECT pg_stat_clear_snapshot()');
  const [row] = await sql.query<{ scans: number }>(
    `SELECT idx_scan::int AS scans FROM pg_stat_user_tables WHERE relname = 'custom_catalog'`,
  );
  return row!.scans;
}

describe.each(ENGINES)('the event insert on $name', ({ open }) => {
  let sql: SqlRunner;
  let cleanup: () => Promise<void>;

  // a session of each test's own: the prepared statement's counters then count that test's batches alone, from the
  // statement's first plan on
  beforeEach(async () => {
    ({ sql, cleanup } = await open());
  });
  afterEach(() => cleanup?.());

  it('runs every batch with the generic plan it made once', async () => {
    const id = await newApp(sql, 'plan');
    const events = new SqlEventPlane(sql);
    const custom = (n: number) => ({ custom_data: { name: `action_${n % 3}`, sku: `sku_${n % 5}` } });
    for (let batch = 0; batch < 8; batch++)
      await events.insert(
        Array.from({ length: 50 }, (_, n) =>
          eventRow(id, n % 2 ? { eventName: 'custom-event', props: custom(n) } : { eventName: 'app-init' }),
        ),
      );
    const [statement] = await sql.query<{ generic_plans: number; custom_plans: number }>(
      `SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE name LIKE 'tma_insert_events_%'`,
    );
    expect(statement).toEqual({ generic_plans: 8, custom_plans: 0 });
  });

  it('reads only the batch entries of the custom event catalog, however large the catalog grew after its plan', async () => {
    const id = await newApp(sql, 'catalog');
    const events = new SqlEventPlane(sql);
    const batch = (seed: number) =>
      events.insert(
        Array.from({ length: 40 }, (_, n) =>
          eventRow(id, {
            eventName: 'custom-event',
            props: { custom_data: { name: `buy_${n % 4}`, sku: `sku_${(seed + n) % 9}` } },
          }),
        ),
      );
    await batch(0); // planned while the catalog holds a few entries
    // other apps' property values, as a service with many apps gathers them
    await sql.query(
      `INSERT INTO custom_catalog (app_id, level, name, property, value)
       SELECT 100000 + g / 1000, 2, 'name', 'sku', 'value ' || g FROM generate_series(1, 20000) AS g`,
    );
    const catalogRowsRead = async () => {
      await sql.query('SELECT pg_stat_clear_snapshot()');
      const [row] = await sql.query<{ read: number }>(
        `SELECT (seq_tup_read + coalesce(idx_tup_fetch, 0))::int AS read FROM pg_stat_user_tables WHERE relname = 'custom_catalog'`,
      );
      return row!.read;
    };
    await sql.query('SELECT pg_stat_force_next_flush()');
    const before = await catalogRowsRead();
    await batch(1);
    await sql.query('SELECT pg_stat_force_next_flush()');
    const read = (await catalogRowsRead()) - before;
    // each of the batch's names, properties and values is probed once (a few dozen entries), not the whole catalog
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(200);
  });

  it('probes the catalog once for a property value it holds, not again for its property', async () => {
    const id = await newApp(sql, 'probe');
    const events = new SqlEventPlane(sql);
    // 4 names and 9 values of one property: 36 property values, each in every batch
    const batch = () => events.insert(purchases(id, 36, 9));
    await batch(); // the catalog takes them
    const before = await catalogProbes(sql);
    await batch();
    const probes = (await catalogProbes(sql)) - before;
    // a probe per property value and per name (and none for the property of a value the catalog holds)
    expect(probes).toBeGreaterThanOrEqual(36);
    expect(probes).toBeLessThan(36 + 10);
  });

  it('probes a small, analysed catalog through its index, not by reading all of it for each entry', async () => {
    const id = await newApp(sql, 'small');
    const events = new SqlEventPlane(sql);
    const batch = () => events.insert(purchases(id, 100, 50));
    await batch();
    // as the service's table maintenance does while the catalog is young: its statistics then say one page, and the
    // statement is planned anew with them
    await sql.query('ANALYZE custom_catalog');
    await batch();
    const scans = async () => {
      await sql.query('SELECT pg_stat_force_next_flush()');
      await sql.query('SELECT pg_stat_clear_snapshot()');
      const [row] = await sql.query<{ scans: number }>(
        `SELECT seq_scan::int AS scans FROM pg_stat_user_tables WHERE relname = 'custom_catalog'`,
      );
      return row!.scans;
    };
    const before = await scans();
    await batch();
    expect((await scans()) - before).toBe(0);
  });

  it('probes a full property and counts its room once per batch, not once per value it brings', async () => {
    const id = await newApp(sql, 'room');
    const events = new SqlEventPlane(sql);
    // a property of unique values (an order number, say): the catalog's room for it fills in the first batch
    let order = 0;
    const batch = () =>
      events.insert(
        Array.from({ length: 300 }, () =>
          eventRow(id, { eventName: 'custom-event', props: { custom_data: { name: 'paid', order: order++ } } }),
        ),
      );
    await batch();
    const [{ values }] = (await sql.query<{ values: number }>(
      `SELECT count(*)::int AS values FROM custom_catalog WHERE app_id = ${id} AND property = 'order' AND value <> ''`,
    )) as [{ values: number }];
    expect(values).toBe(MAX_CUSTOM_VALUES);
    const before = await catalogProbes(sql);
    await batch();
    const probes = (await catalogProbes(sql)) - before;
    // each new value is probed; its property once, as is the room under it
    expect(probes).toBeGreaterThanOrEqual(300);
    expect(probes).toBeLessThan(300 + 10);
  });
});
