// Named parameters in SQL text: statements are written with {{name}} (param('name')) and numbered here, so no
// statement spells out $1…$n by hand and a value is found by its name, not by its place in an array.

/** a named parameter's placeholder in SQL text: {{name}} */
export const param = (name: string) => `{{${name}}}`;

const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/** values of a statement's named parameters, by name */
export type NamedValues = Readonly<Record<string, unknown>>;

/** a statement whose named parameters are numbered: its text ($1…$n) and the names in the order of their numbers */
export interface NumberedStatement {
  text: string;
  names: readonly string[];
}

/** each name gets one number, in the order the names first appear */
export function numbered(text: string): NumberedStatement {
  const names: string[] = [];
  const numberOf = new Map<string, number>();
  const numberedText = text.replace(PLACEHOLDER, (_, name: string) => {
    let number = numberOf.get(name);
    if (number === undefined) numberOf.set(name, (number = names.push(name)));
    return `$${number}`;
  });
  return { text: numberedText, names };
}

/** the statement's parameters in the order of their numbers; a name without a value is a mistake in the caller */
export function valuesOf(statement: NumberedStatement, values: NamedValues): unknown[] {
  return statement.names.map((name) => {
    if (!(name in values)) throw new Error(`SQL parameter ${name} has no value`);
    return values[name];
  });
}

/** statements numbered before: the service's statement texts are few (a filter's conditions add a few variants) */
const numberedTexts = new Map<string, NumberedStatement>();
const NUMBERED_KEPT = 1_000;

/** a statement with named parameters and their values, as a runner's query takes them: query(...named(text, values)) */
export function named(text: string, values: NamedValues = {}): [string, unknown[]] {
  let statement = numberedTexts.get(text);
  if (!statement) {
    statement = numbered(text);
    if (numberedTexts.size >= NUMBERED_KEPT) numberedTexts.clear();
    numberedTexts.set(text, statement);
  }
  return [statement.text, valuesOf(statement, values)];
}
