// A share of a whole, or null when there is no whole to share: the caller decides what "no data" reads as.

export function ratio(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}
