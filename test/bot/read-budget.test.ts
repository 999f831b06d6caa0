// The bot says in words when the numbers of a screen took longer than the read budget, instead of failing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlReader } from '../../src/db/sql.ts';
import { BotHarness, textsOf } from '../helpers/bot-harness.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ALICE = 1001;

let service: TestService;
let harness: BotHarness;

beforeAll(async () => {
  service = await startTestService({ READ_BUDGET_MS: '3000' });
  harness = new BotHarness(service.services);
  await harness.click(ALICE, 'menu:new');
  await harness.send(ALICE, 't.me/slow_shop_bot');
  await harness.send(ALICE, '/skip');
  await harness.send(ALICE, 'shop.example.com');
  await harness.send(ALICE, 'slow_shop');
});
afterAll(() => service?.close());

describe('bot screens past the read budget', () => {
  it('tells the user the numbers took too long, and shows them once the store answers in time', async () => {
    const reads = service.store.reads;
    const query = reads.query;
    // every read made slow: a real statement of a minute through the store's read runner first
    reads.query = (async (text: string, params?: unknown[]) => {
      await query.call(reads, 'SELECT pg_sleep(60)');
      return query.call(reads, text, params);
    }) as SqlReader['query'];
    let slow: string;
    try {
      slow = textsOf(await harness.click(ALICE, 'menu:apps'));
    } finally {
      reads.query = query;
    }
    expect(slow).toBe('The numbers took longer than 3 s to read. Please try again in a minute.');
    expect(harness.errors).toEqual([]);
    // a budget a loaded machine can still miss now and then: the screen shows the numbers once a read is in time
    await expect
      .poll(async () => textsOf(await harness.click(ALICE, 'menu:apps')), {
        message: 'the apps screen with its numbers once reads are fast again',
        timeout: 60_000,
      })
      .toContain('slow_shop');
  });
});
