// The order of ROLLUPS holds what their SQL needs: each reads only CTEs it declares, made by rollups before it in the
// list, in the store's mode with and without the insights; checked on the rollups' text, without a database.
import { describe, expect, it } from 'vitest';
import { ROLLUPS } from '../../../src/events/write/rollups/index.ts';
import type { Rollup } from '../../../src/events/write/rollups/rollup.ts';

/** the CTEs a rollup makes: its SQL is `name AS (…)` joined with commas */
function madeBy(rollup: Rollup, insights: boolean): string[] {
  return [...rollup.sql(insights).matchAll(/(?:^|,)\s*([a-z_0-9]+) AS (?:MATERIALIZED )?\(/g)].map(
    (match) => match[1]!,
  );
}

/** the relations SQL reads rows from (not the functions it reads rows of) */
const relationsOf = (sql: string) =>
  new Set(
    [...sql.matchAll(/\b(?:FROM|JOIN)\s+(?:LATERAL\s+)?(?!LATERAL\b)([a-z_0-9]+)\b(?!\s*\()/gi)].map(
      (match) => match[1]!,
    ),
  );

/** the relations a rollup's SQL reads rows from */
const readFrom = (rollup: Rollup, insights: boolean) => relationsOf(rollup.sql(insights));

/**
 * What a pre-aggregated rollup reads beyond its own CTEs and tables, those it declares, the gatherings' inputs and
 * the apps written for: nothing, or it computes again, from the rows of events, what ingest gathered
 */
function beyondGathered(rollups: readonly Rollup[]): string[] {
  const inputs = rollups.flatMap((rollup) =>
    rollup.preAggregated?.inputSql
      ? [...rollup.preAggregated.inputSql.matchAll(/([a-z_0-9]+) AS \(/g)].map((m) => m[1]!)
      : [],
  );
  return rollups.flatMap((rollup) => {
    if (!rollup.preAggregated) return [];
    const allowed = new Set([
      ...madeBy(rollup, true),
      ...(rollup.reads ?? []),
      ...inputs,
      ...rollup.tables.map((table) => table.name),
      'live_apps',
    ]);
    const read = relationsOf(`${rollup.sql(true)} ${rollup.preAggregated.inputSql ?? ''}`);
    return [...read].filter((relation) => !allowed.has(relation)).map((relation) => `${rollup.name} reads ${relation}`);
  });
}

/** what in the list's order or declarations breaks a rollup's reads of another's CTEs */
function orderProblems(rollups: readonly Rollup[], insights: boolean): string[] {
  const makers = new Map<string, string>();
  for (const rollup of rollups) for (const name of madeBy(rollup, insights)) makers.set(name, rollup.name);
  const made = new Set<string>();
  const problems: string[] = [];
  for (const rollup of rollups) {
    const declared = new Set(rollup.reads ?? []);
    for (const name of readFrom(rollup, insights)) {
      const maker = makers.get(name);
      if (maker === undefined || maker === rollup.name) continue;
      if (!declared.has(name)) problems.push(`${rollup.name} reads ${name} (of ${maker}) without declaring it`);
      else if (!made.has(name)) problems.push(`${rollup.name} reads ${name}, which ${maker} makes after it`);
    }
    for (const name of declared)
      if (!makers.has(name)) problems.push(`${rollup.name} declares ${name}, which no rollup makes`);
    for (const name of madeBy(rollup, insights)) made.add(name);
  }
  return problems;
}

const named = (name: string) => ROLLUPS.find((rollup) => rollup.name === name)!;

describe('the rollups of the event insert', () => {
  for (const insights of [true, false]) {
    it(`read only the CTEs they declare, made by rollups before them (${insights ? 'with' : 'without'} the insights)`, () => {
      expect(madeBy(named('sessions'), insights), 'the walk finds the CTEs').toContain('new_sessions');
      expect(orderProblems(ROLLUPS, insights)).toEqual([]);
    });
  }

  it('a rollup moved before one whose CTEs it reads, or reading one it does not declare, is named', () => {
    const stats = named('daily users and sessions');
    const moved = [stats, ...ROLLUPS.filter((rollup) => rollup !== stats)];
    expect(orderProblems(moved, true)).toEqual([
      'daily users and sessions reads new_users, which users makes after it',
      'daily users and sessions reads new_sessions, which sessions makes after it',
    ]);
    const undeclared = ROLLUPS.map((rollup) => (rollup === stats ? { ...stats, reads: ['new_users'] } : rollup));
    expect(orderProblems(undeclared, true)).toEqual([
      'daily users and sessions reads new_sessions (of sessions) without declaring it',
    ]);
  });

  it('a pre-aggregated rollup reads only what its gathering made at ingest, never the rows of events', () => {
    expect(ROLLUPS.filter((rollup) => rollup.preAggregated).length).toBeGreaterThan(1);
    expect(beyondGathered(ROLLUPS)).toEqual([]);
    const postings = named('funnel postings');
    const computing = { ...postings, sql: () => `${postings.sql(true)}, again AS (SELECT app_id FROM inserted)` };
    expect(beyondGathered([computing])).toEqual(['funnel postings reads inserted']);
  });
});
