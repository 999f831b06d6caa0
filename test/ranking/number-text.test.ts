// The catalog's numbers: printed as en-US prints them, and without the locale machinery at load (a number formatter
// holds megabytes of ICU data in every service, whether or not anyone asks for the catalog).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { groupedNumber } from '../../src/ranking/number-text.ts';

describe('catalog numbers', () => {
  it('print as en-US Intl prints them, whole and with one decimal', () => {
    const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
    const oneDecimal = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
    const values = [0, 1, 7, 12, 999, 1000, 1001, 9999.5, 12_345, 100_000, 999_999.96, 1_234_567, 98_765_432_109];
    for (const value of [
      ...values,
      ...values.filter(Boolean).map((v) => -v),
      0.05,
      0.25,
      0.45,
      1.05,
      2.5,
      3.5,
      999.95,
      37.04,
    ]) {
      expect(groupedNumber(value), String(value)).toBe(whole.format(value));
      expect(groupedNumber(value, 1), String(value)).toBe(oneDecimal.format(value));
    }
    expect(groupedNumber(Number.NaN)).toBe('NaN');
  });

  describe('loading the catalog', () => {
    const originals = { NumberFormat: Intl.NumberFormat, toLocaleString: Number.prototype.toLocaleString };
    afterEach(() => {
      Intl.NumberFormat = originals.NumberFormat;
      Number.prototype.toLocaleString = originals.toLocaleString;
    });

    it('formats nothing by locale', async () => {
      const uses: string[] = [];
      Intl.NumberFormat = new Proxy(originals.NumberFormat, {
        construct: (target, args) => {
          uses.push('Intl.NumberFormat');
          return Reflect.construct(target, args);
        },
      });
      Number.prototype.toLocaleString = function (this: number, ...args: Parameters<number['toLocaleString']>) {
        uses.push('toLocaleString');
        return originals.toLocaleString.apply(this, args);
      };
      vi.resetModules();
      await import('../../src/site/catalog-routes.ts');
      expect(uses).toEqual([]);
    });
  });
});
