// Measures how deeply a JSON text nests without parsing it: a hostile body hundreds of thousands of levels deep
// would otherwise be built whole, tens of megabytes of arrays and a tenth of a second of CPU, only to be refused.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** whether the quote at `at` is escaped: an odd run of backslashes before it */
function escaped(text: Buffer, at: number): boolean {
  let backslashes = 0;
  while (at - backslashes - 1 >= 0 && text[at - backslashes - 1] === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/**
 * Whether `text` opens more than `limit` arrays or objects within each other. Brackets inside strings do not
 * count; the text need not be valid JSON (an invalid one is refused by the parser after).
 */
export function nestsDeeperThan(text: Buffer, limit: number): boolean {
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const byte = text[at];
    if (byte === QUOTE) {
      let end = text.indexOf(QUOTE, at + 1);
      while (end !== -1 && escaped(text, end)) end = text.indexOf(QUOTE, end + 1);
      if (end === -1) return false;
      at = end;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}
