// Rows of PostgreSQL's binary COPY output are read by the names the select gives its columns, never by place alone:
// a row of another width than the names is refused.
import { describe, expect, it } from 'vitest';
import { binaryCopyRows } from '../../src/db/binary-copy.ts';

/** a binary COPY's output as PostgreSQL writes it: signature, flags, no header extension, the rows, the trailer */
function copyOutput(rows: (string | null)[][]): Buffer {
  const parts = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)];
  for (const row of rows) {
    const width = Buffer.alloc(2);
    width.writeInt16BE(row.length);
    parts.push(width);
    for (const value of row) {
      const length = Buffer.alloc(4);
      length.writeInt32BE(value === null ? -1 : Buffer.byteLength(value));
      parts.push(length, ...(value === null ? [] : [Buffer.from(value)]));
    }
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1);
  return Buffer.concat([...parts, trailer]);
}

describe('binary COPY rows', () => {
  it('gives each column under its name, NULL as null', () => {
    const rows = binaryCopyRows(
      copyOutput([
        ['signup', '2026-11-28', 'x'],
        ['purchase', '2026-11-27', null],
      ]),
      ['step', 'day', 'entries'],
    );
    expect(
      rows.map(({ step, day, entries }) => [step?.toString(), day?.toString(), entries?.toString() ?? null]),
    ).toEqual([
      ['signup', '2026-11-28', 'x'],
      ['purchase', '2026-11-27', null],
    ]);
  });

  it('refuses a row whose width is not the names given', () => {
    expect(() => binaryCopyRows(copyOutput([['signup', '2026-11-28']]), ['step', 'day', 'entries'])).toThrow(
      'a row of 2 columns where 3 were named',
    );
  });
});
