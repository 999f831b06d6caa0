// The service purges what apps' retention periods keep no longer as soon as it starts (and hourly after), leaves
// apps without one alone, and still stops cleanly.
import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/db/store.ts';
import { addDays } from '../../../src/events/days.ts';
import { SqlEventPlane, type EventRow } from '../../../src/events/write/event-plane.ts';
import { available } from '../../helpers/environment.ts';
import type { TestDatabase } from '../../helpers/postgres.ts';
import { migratedDatabase } from '../../helpers/stores.ts';
import { tempDir } from '../../helpers/service.ts';
import { killAllChildren, startServiceProcess } from '../../helpers/service-process.ts';
import { eventRow } from '../../helpers/events.ts';

function event(appId: number, daysAgo: number): EventRow {
  const at = new Date(Date.now() - daysAgo * 86_400_000);
  const eventKey = crypto.randomBytes(16);
  eventKey.writeUIntBE(at.getTime(), 0, 6);
  return eventRow(appId, { eventKey, receivedAt: at });
}

describe.runIf(await available('PostgreSQL'))('retention purge at start', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await killAllChildren();
    await database?.drop();
  });

  it("deletes the events before an app's period when the service starts, and keeps other apps' rows", async () => {
    database = await migratedDatabase();
    const config = { databaseUrl: database.url, dataDir: tempDir() };
    const store = await openStore(config);
    const eventsBefore = async (appId: number, day: string) =>
      (
        await store.sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM events WHERE app_id = $1 AND day < $2::date`,
          [appId, day],
        )
      )[0]!.n;
    try {
      const [limited, unlimited] = await Promise.all(
        [
          ['limited_app', 30],
          ['unlimited_app', null],
        ].map(
          async ([appName, retentionDays]) =>
            (
              await store.prisma.app.create({
                data: {
                  appName: appName as string,
                  bot: '@x_bot',
                  domains: ['x.example'],
                  retentionDays: retentionDays as number | null,
                },
              })
            ).id,
        ),
      );
      const events = new SqlEventPlane(store.sql);
      for (const appId of [limited, unlimited])
        await events.insert(
          [0, 1, 28, 32, 45, 200].flatMap((daysAgo) => [event(appId, daysAgo), event(appId, daysAgo)]),
        );
      const firstKept = addDays(new Date().toISOString().slice(0, 10), -29);
      expect(await eventsBefore(limited, firstKept)).toBe(6);

      const service = await startServiceProcess({
        DATABASE_URL: database.url,
        DATA_DIR: config.dataDir,
        LOG_LEVEL: 'warn',
      });
      await expect.poll(() => eventsBefore(limited, firstKept), { timeout: 15_000, interval: 100 }).toBe(0);
      const left = await store.sql.query<{ app_id: number; n: number }>(
        `SELECT app_id, count(*)::int AS n FROM events GROUP BY 1 ORDER BY 1`,
      );
      // the apps were created at once: either may have the lower id
      expect(left).toEqual(
        [
          { app_id: limited, n: 6 },
          { app_id: unlimited, n: 12 },
        ].sort((a, b) => a.app_id - b.app_id),
      );
      expect(await service.stop(), service.output()).toEqual({ code: 0, signal: null });
    } finally {
      await store.close();
    }
  });
});
