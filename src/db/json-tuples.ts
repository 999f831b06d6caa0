// Rows that travel to a statement as JSON arrays (about half the text of objects with named fields, and less of
// PostgreSQL's CPU to read): one list of named, typed columns makes a row's array, reads it back, and gives the SQL
// that reads each place with its cast, so no statement reads a place by a number written by hand.

/** how a column's value travels in the array, and what SQL makes of it */
export type TupleKind =
  | 'int'
  | 'bigint'
  | 'float8'
  | 'bool'
  | 'date'
  | 'uuid'
  | 'text'
  | 'base64'
  | 'epochMs'
  | 'jsonb';

export interface TupleColumn {
  /** the column's name in SQL */
  name: string;
  kind: TupleKind;
}

/** SQL: the value at `index` of the jsonb array `tuple`, as its kind */
function placeSql(tuple: string, index: number, kind: TupleKind): string {
  switch (kind) {
    case 'text':
      return `${tuple}->>${index}`;
    case 'jsonb':
      return `${tuple}->${index}`;
    case 'base64':
      return `decode(${tuple}->>${index}, 'base64')`;
    case 'epochMs':
      return `to_timestamp((${tuple}->>${index})::float8 / 1000)`;
    default:
      return `(${tuple}->>${index})::${kind}`;
  }
}

/** a list of columns read from JSON arrays */
export class JsonTuple<const Columns extends readonly TupleColumn[]> {
  constructor(readonly columns: Columns) {}

  /** SQL: the value of the column `name` of the jsonb array `tuple` */
  get(tuple: string, name: Columns[number]['name']): string {
    const index = this.columns.findIndex((column) => column.name === name);
    if (index < 0) throw new Error(`no column ${name}`);
    return placeSql(tuple, index, this.columns[index]!.kind);
  }

  /** SQL: every column of the jsonb array `tuple`, cast and named, as a select list */
  select(tuple: string): string {
    return this.columns.map(({ name, kind }, index) => `${placeSql(tuple, index, kind)} AS ${name}`).join(', ');
  }
}
