// Rows out of PostgreSQL's binary COPY format, each column as its bytes: how bytea columns reach this process as
// bytes, where a query's text rows carry them as hex text twice their size, decoded on this thread.

/** the format's signature, then its flags and the length of its header extension (both 32-bit) */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** the rows of a binary COPY's output: per row, each column's bytes (null for NULL) */
export function binaryCopyRows(data: Buffer): (Buffer | null)[][] {
  if (data.length < SIGNATURE.length + 8 || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE))
    throw new Error('not the output of a binary COPY');
  let at = SIGNATURE.length + 4;
  at += 4 + data.readUInt32BE(at);
  const rows: (Buffer | null)[][] = [];
  for (;;) {
    const columns = data.readInt16BE(at);
    at += 2;
    // the trailer: a row of -1 columns
    if (columns < 0) return rows;
    const row: (Buffer | null)[] = [];
    for (let column = 0; column < columns; column++) {
      const length = data.readInt32BE(at);
      at += 4;
      if (length < 0) row.push(null);
      else {
        row.push(data.subarray(at, at + length));
        at += length;
      }
    }
    rows.push(row);
  }
}
