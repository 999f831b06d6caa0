// Counts and scores as the catalog prints them ("12,345", "1,234.5") without Intl: a number formatter pages megabytes of
// the node binary's locale data into the process, and the catalog prints in one locale only.

/** the places between each group of three digits of a whole number's digits */
const THOUSANDS = /\B(?=(\d{3})+(?!\d))/g;

/** value rounded to `decimals` places (half away from zero, as en-US Intl rounds), its whole part grouped by thousands */
export function groupedNumber(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return String(value);
  const [whole, fraction] = value.toFixed(decimals).split('.');
  const grouped = whole!.replace(THOUSANDS, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}
