// Erasing a user takes the texts they sent themselves, on both engines, through a real service: their id in a
// start_param, in a custom event's name, a property's name and a property's value, and a platform and language only
// they launched with, leave every table and every answer (the dashboard, the read API); the texts another user sent
// too stay, counted without the erased user.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RollupReader } from '../../../src/events/read/dashboard.ts';
import { OPERATOR } from '../../../src/tokens/registry.ts';
import { makeEvent, postEvents } from '../../helpers/events.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../../helpers/stores.ts';

const ERASED_USER = 8811223344;
const KEPT_USER = 5566778899;
const ID = String(ERASED_USER);
const today = new Date().toISOString().slice(0, 10);
const period = { from: today, to: today };

async function get(service: TestService, path: string, key: string) {
  const response = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status, path).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * the erased user: a session from a referral link carrying their id, on a platform and in a language no one else
 * uses, with a custom event named after them; a second session like the kept user's, with a custom event whose
 * property name and value carry their id beside a value the kept user sends too
 */
function events(): Record<string, unknown>[] {
  const [referred, usual, kept] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  const launch = { platform: 'android_x', locale: 'eo', start_param: `ref${ID}` };
  const common = { platform: 'ios', locale: 'en', start_param: 'promo' };
  return [
    makeEvent('texts_app', { user_id: ERASED_USER, session_id: referred, ...launch }),
    makeEvent('texts_app', {
      user_id: ERASED_USER,
      session_id: referred,
      ...launch,
      event_name: 'custom-event',
      custom_data: { name: `profile_${ID}`, plan: 'pro' },
    }),
    makeEvent('texts_app', { user_id: ERASED_USER, session_id: usual, ...common }),
    makeEvent('texts_app', {
      user_id: ERASED_USER,
      session_id: usual,
      ...common,
      event_name: 'custom-event',
      custom_data: { name: 'profile', telegram_id: ID, [`id_${ID}`]: 'yes', plan: 'pro' },
    }),
    makeEvent('texts_app', { user_id: KEPT_USER, session_id: kept, ...common }),
    makeEvent('texts_app', {
      user_id: KEPT_USER,
      session_id: kept,
      ...common,
      event_name: 'custom-event',
      custom_data: { name: 'profile', telegram_id: String(KEPT_USER), plan: 'pro' },
    }),
  ];
}

describe(`erasing the texts a user sent on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  let key: string;
  let appId: number;

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startTestService(backend.env);
    expectProjectStore(service.store);
    const token = await service.createApp('texts_app');
    ({ key } = await service.services.readKeys.create('texts_app', OPERATOR));
    appId = (await service.store.prisma.app.findUniqueOrThrow({ where: { appName: 'texts_app' } })).id;
    expect((await postEvents(service.url, events(), { token })).status).toBe(201);
    await service.loaded();
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  const path = (route: string) => `/api/v1/apps/texts_app/${route}?from=${today}&to=${today}`;
  const dimensions = async () => (await new RollupReader(service.store.reads).dashboard(appId, period)).dimensions;

  /** the rows of every table of the store (the event plane, the catalog, the audit log, …) that hold `needle` */
  async function rowsHolding(needle: string): Promise<string[]> {
    const tables = await service.store.sql.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r' ORDER BY 1`,
    );
    expect(tables.length).toBeGreaterThan(20);
    const found: string[] = [];
    for (const { name } of tables) {
      const rows = await service.store.sql.query<{ row: string }>(
        `SELECT row_to_json(t)::text AS row FROM "${name}" t WHERE strpos(row_to_json(t)::text, $1) > 0`,
        [needle],
      );
      found.push(...rows.map(({ row }) => `${name}: ${row}`));
    }
    return found;
  }

  it('takes the texts only they sent out of every table and answer, and the shared ones count without them', async () => {
    const userKey = service.services.pseudonymiser.userKey(appId, ID);
    // as sent: every text is stored and answered
    expect(await dimensions()).toEqual({
      platform: [
        { value: 'ios', sessions: 2 },
        { value: 'android_x', sessions: 1 },
      ],
      locale: [
        { value: 'en', sessions: 2 },
        { value: 'eo', sessions: 1 },
      ],
      start_param: [
        { value: 'promo', sessions: 2 },
        { value: `ref${ID}`, sessions: 1 },
      ],
    });
    expect(await get(service, path('custom-events'), key)).toEqual({
      period,
      events: [
        { name: 'profile', count: 2, users: 2, properties: [`id_${ID}`, 'plan', 'telegram_id'] },
        { name: `profile_${ID}`, count: 1, users: 1, properties: ['plan'] },
      ],
    });
    expect((await get(service, path('custom-events/profile/properties/telegram_id'), key)).values).toEqual([
      { value: String(KEPT_USER), count: 1 },
      { value: ID, count: 1 },
    ]);
    expect(await rowsHolding(ID)).not.toEqual([]);

    const erased = await service.services.dataControls.eraseUser('texts_app', ID, OPERATOR);
    expect(erased.complete).toBe(true);
    expect(erased.deleted.events).toBe(4);

    // the dashboard: a platform, a language and a start_param only they launched with are gone, the shared ones
    // count the kept user's session alone
    expect(await dimensions()).toEqual({
      platform: [{ value: 'ios', sessions: 1 }],
      locale: [{ value: 'en', sessions: 1 }],
      start_param: [{ value: 'promo', sessions: 1 }],
    });
    // the read API: their custom event name, their property name and value are gone; the shared name and value
    // count the kept user's event alone
    expect(await get(service, path('custom-events'), key)).toEqual({
      period,
      events: [{ name: 'profile', count: 1, users: 1, properties: ['plan', 'telegram_id'] }],
    });
    expect((await get(service, path('custom-events/profile/properties/telegram_id'), key)).values).toEqual([
      { value: String(KEPT_USER), count: 1 },
    ]);
    expect((await get(service, path('custom-events/profile/properties/plan'), key)).values).toEqual([
      { value: 'pro', count: 1 },
    ]);
    expect((await get(service, path(`custom-events/profile/properties/id_${ID}`), key)).values).toEqual([]);
    expect((await get(service, path(`custom-events/profile_${ID}/properties/plan`), key)).values).toEqual([]);
    expect((await get(service, path('campaigns'), key)).campaigns).toEqual([
      { start_param: 'promo', new_users: 1, retained_d7: 0, wallet_connections: 0 },
    ]);

    // no table holds their id in any text, nor their key (a bytea row prints as hex)
    expect(await rowsHolding(ID)).toEqual([]);
    expect(await rowsHolding(userKey.toString('hex'))).toEqual([]);
    for (const only of ['android_x', '"eo"']) expect(await rowsHolding(only), only).toEqual([]);
    // and the kept user's texts stay
    expect((await rowsHolding(String(KEPT_USER))).length).toBeGreaterThan(0);
  });
});
