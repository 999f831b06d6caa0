// Named parameters: each name gets one number in the order it first appears, and its value is found by name.
import { describe, expect, it } from 'vitest';
import { named, numbered, param } from '../../src/db/named-sql.ts';

describe('named SQL parameters', () => {
  it('numbers each name once, in the order the names first appear', () => {
    const text = `SELECT * FROM t WHERE a = ${param('app')} AND d BETWEEN {{from}}::date AND {{to}}::date AND b = {{app}}`;
    expect(numbered(text)).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND d BETWEEN $2::date AND $3::date AND b = $1',
      names: ['app', 'from', 'to'],
    });
    expect(named(text, { to: '2026-01-31', app: 7, from: '2026-01-01', unused: true })).toEqual([
      'SELECT * FROM t WHERE a = $1 AND d BETWEEN $2::date AND $3::date AND b = $1',
      [7, '2026-01-01', '2026-01-31'],
    ]);
  });

  it('refuses a statement whose parameter has no value', () => {
    expect(() => named('SELECT {{missing}}', {})).toThrow('SQL parameter missing has no value');
  });

  it('leaves text without placeholders as it is', () => {
    expect(named(`SELECT '{}'::jsonb, '{"a":1}'`)).toEqual([`SELECT '{}'::jsonb, '{"a":1}'`, []]);
  });
});
