// /healthz answers from state the loader and a background probe keep: a long statement holding the store (on the
// embedded store, its one connection) does not delay it, and it still says whether the store answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND, statementRuns } from '../helpers/stores.ts';

/**
 * how long the statement holds the store; /healthz must answer within it. Below the server pool's statement timeout
 * (5 s), which would cut a longer one.
 */
const LONG_STATEMENT_S = 4;

describe(`/healthz while a long statement runs, on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const opened = await SERVICE_BACKEND.open();
    drop = opened.drop;
    service = await startTestService(opened.env);
    expectProjectStore(service.store);
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  it('answers 200 "ok" while the statement runs, not after it', async () => {
    const started = performance.now();
    let statementDone: number | undefined;
    const text = `SELECT pg_sleep(${LONG_STATEMENT_S})`;
    const statement = service.store.sql.query(text).finally(() => (statementDone = performance.now()));
    await expect
      .poll(() => statementRuns(service.store, text), { timeout: 30_000, message: 'the statement has the store' })
      .toBe(true);
    const response = await fetch(`${service.url}/healthz`);
    const body = (await response.json()) as { status: string; store_last_success_seconds: number | null };
    expect(statementDone, 'the statement was still running when /healthz answered').toBeUndefined();
    expect(response.status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.store_last_success_seconds).toEqual(expect.any(Number));
    await statement;
    expect(statementDone! - started).toBeGreaterThanOrEqual(LONG_STATEMENT_S * 1000 - 100);
  });
});
