// The result of parsing what a person typed or a client sent: the value, or the sentence that says what is wrong.
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };
