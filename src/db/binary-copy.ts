// Rows out of PostgreSQL's binary COPY format, each column as its bytes: how bytea columns reach this process as
// bytes, where a query's text rows carry them as hex text twice their size, decoded on this thread.

/** the format's signature, then its flags and the length of its header extension (both 32-bit) */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * the rows of a binary COPY's output, each column's bytes (null for NULL) under its name: `columns` names the select's
 * columns in their order (the format carries no names), and a row of another width is refused
 */
export function binaryCopyRows<Column extends string>(
  data: Buffer,
  columns: readonly Column[],
): Record<Column, Buffer | null>[] {
  if (data.length < SIGNATURE.length + 8 || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE))
    throw new Error('not the output of a binary COPY');
  let at = SIGNATURE.length + 4;
  at += 4 + data.readUInt32BE(at);
  const rows: Record<Column, Buffer | null>[] = [];
  for (;;) {
    const width = data.readInt16BE(at);
    at += 2;
    // the trailer: a row of -1 columns
    if (width < 0) return rows;
    if (width !== columns.length) throw new Error(`a row of ${width} columns where ${columns.length} were named`);
    const row = {} as Record<Column, Buffer | null>;
    for (const column of columns) {
      const length = data.readInt32BE(at);
      at += 4;
      if (length < 0) row[column] = null;
      else {
        row[column] = data.subarray(at, at + length);
        at += length;
      }
    }
    rows.push(row);
  }
}
