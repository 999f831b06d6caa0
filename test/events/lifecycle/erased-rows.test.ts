// The rows an erase counts derive from the rollups' declared tables: a table declared deleted by the user's key or
// sessions is counted, or the erase's module does not compile (lint's type check reads this file too).
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ErasedRows } from '../../../src/events/lifecycle/user-erasure.ts';
import { EVENT_PLANE_TABLE_LIST } from '../../../src/events/write/rollups/index.ts';

describe('the rows an erase counts', () => {
  it('name the events, the funnel postings and every table declared deleted by the user or their sessions', () => {
    expectTypeOf<keyof ErasedRows>().toEqualTypeOf<
      | 'events'
      | 'funnel_postings'
      | 'daily_users'
      | 'app_users'
      | 'wallet_users'
      | 'daily_sessions'
      | 'verified_sessions'
    >();
    const deleted = EVENT_PLANE_TABLE_LIST.filter(
      ({ erasure }) => erasure.kind === 'user' || erasure.kind === 'session',
    );
    expect(deleted.map(({ name }) => name).sort()).toEqual([
      'app_users',
      'daily_sessions',
      'daily_users',
      'verified_sessions',
      'wallet_users',
    ]);
  });
});
