// An app deleted while its purge was cut short (the service stopped right after the deletion) has its
// events and rollups removed when the service starts again; other apps keep theirs.
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/db/store.ts';
import { EVENT_PLANE_TABLES, SqlEventPlane } from '../../../src/events/write/event-plane.ts';
import { available } from '../../helpers/environment.ts';
import type { TestDatabase } from '../../helpers/postgres.ts';
import { migratedDatabase } from '../../helpers/stores.ts';
import { tempDir } from '../../helpers/service.ts';
import { killAllChildren, startServiceProcess } from '../../helpers/service-process.ts';
import { eventRow } from '../../helpers/events.ts';

const event = (appId: number) => eventRow(appId);

describe.runIf(await available('PostgreSQL'))('purge of deleted apps at start', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await killAllChildren();
    await database?.drop();
  });

  it("finishes the purge of an app deleted before a stop, and keeps the other apps' rows", async () => {
    database = await migratedDatabase();
    const config = { databaseUrl: database.url, dataDir: tempDir() };
    const store = await openStore(config);
    const rowsOf = async (appId: number) => {
      let total = 0;
      for (const table of EVENT_PLANE_TABLES) {
        total += (
          await store.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE app_id = $1`, [appId])
        )[0]!.n;
      }
      return total;
    };
    try {
      const [deleted, kept] = await Promise.all(
        ['deleted_app', 'kept_app'].map(
          async (appName) =>
            (await store.prisma.app.create({ data: { appName, bot: '@x_bot', domains: ['x.example'] } })).id,
        ),
      );
      const events = new SqlEventPlane(store.sql);
      for (const appId of [deleted, kept]) await events.insert(Array.from({ length: 40 }, () => event(appId)));
      const keptRows = await rowsOf(kept);
      // the deletion committed, then the process stopped before purging anything
      await store.prisma.app.delete({ where: { id: deleted } });
      expect(await rowsOf(deleted)).toBeGreaterThan(40);

      const service = await startServiceProcess({
        DATABASE_URL: database.url,
        DATA_DIR: config.dataDir,
        LOG_LEVEL: 'warn',
      });
      const deadline = Date.now() + 15_000;
      while ((await rowsOf(deleted)) > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await rowsOf(deleted)).toBe(0);
      expect(await rowsOf(kept)).toBe(keptRows);
      expect(await service.stop(), service.output()).toEqual({ code: 0, signal: null });
    } finally {
      await store.close();
    }
  });
});
