/**
 * Resource quantities as upstream's apimachinery resource.Quantity: parse ("100m", "1.5Gi",
 * "1e3"), compare, and render in canonical form ("1024Mi" -> "1Gi", "0.5" -> "500m"), because
 * upstream always re-serialises quantities canonically and clients see that form.
 */

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** value = mantissa * 10^exp exactly. */
export interface Quantity {
  mantissa: bigint;
  exp: number;
  format: QuantityFormat;
}

const decimalSuffixes: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const binarySuffixes: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const decimalByExp = new Map(Object.entries(decimalSuffixes).map(([s, e]) => [e, s]));
const binaryByExp = new Map(Object.entries(binarySuffixes).map(([s, e]) => [e, s]));

const re = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** Parses a quantity string (or a JSON number); undefined when invalid. Precision below 1n is rounded up, as upstream does. */
export function parseQuantity(input: string | number): Quantity | undefined {
  const s = typeof input === 'number' ? (Number.isFinite(input) ? numberToString(input) : '') : input.trim();
  const m = re.exec(s);
  if (!m) return undefined;
  const [, sign, num, suffix = ''] = m;
  const [intPart, fracPart = ''] = num.split('.');
  let mantissa = BigInt((intPart || '0') + fracPart);
  let exp = -fracPart.length;
  let format: QuantityFormat;
  if (suffix in binarySuffixes) {
    format = 'BinarySI';
    mantissa *= 1n << BigInt(binarySuffixes[suffix]);
  } else if (suffix in decimalSuffixes) {
    format = 'DecimalSI';
    exp += decimalSuffixes[suffix];
  } else {
    format = 'DecimalExponent';
    const e = Number(suffix.slice(1));
    if (!Number.isSafeInteger(e) || Math.abs(e) > 1000) return undefined;
    exp += e;
  }
  if (sign === '-') mantissa = -mantissa;
  // Upstream keeps at most nano precision and rounds anything finer up (away from zero).
  if (exp < -9) {
    const div = 10n ** BigInt(-9 - exp);
    const q = mantissa / div;
    const rem = mantissa % div;
    mantissa = rem === 0n ? q : mantissa > 0n ? q + 1n : q - 1n;
    exp = -9;
  }
  return { mantissa, exp, format };
}

function numberToString(n: number): string {
  // JSON numbers are accepted as quantities; render without exponent noise where possible.
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? BigInt(n).toString() : String(n);
}

/** -1, 0 or 1 as a compares to b. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const e = Math.min(a.exp, b.exp);
  const x = a.mantissa * 10n ** BigInt(a.exp - e);
  const y = b.mantissa * 10n ** BigInt(b.exp - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

function removeFactors(v: bigint, base: bigint): [bigint, number] {
  if (v === 0n) return [0n, 0];
  let times = 0;
  while (v % base === 0n) {
    v /= base;
    times++;
  }
  return [v, times];
}

/** Upstream Quantity.String(): the canonical rendering. */
export function formatQuantity(q: Quantity): string {
  if (q.mantissa === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const abs = q.mantissa < 0n ? -q.mantissa : q.mantissa;
    const small = compareQuantities({ mantissa: abs, exp: q.exp, format }, { mantissa: 1024n, exp: 0, format }) < 0;
    // Binary rendering needs an integer value; otherwise (or for |v| < 1024) fall back to DecimalSI.
    const integral = q.exp >= 0 || q.mantissa % 10n ** BigInt(-q.exp) === 0n;
    if (small || !integral) format = 'DecimalSI';
    else {
      const value = q.exp >= 0 ? q.mantissa * 10n ** BigInt(q.exp) : q.mantissa / 10n ** BigInt(-q.exp);
      const [amount, times] = removeFactors(value, 1024n);
      const suffix = binaryByExp.get(times * 10);
      if (suffix !== undefined) return `${amount}${suffix}`;
      // Beyond Ei: render the remainder with Ei (upstream cannot exceed int64 here anyway).
      return `${amount * 1024n ** BigInt(times - 6)}Ei`;
    }
  }
  const [mantissa, times] = removeFactors(q.mantissa, 10n);
  let amount = mantissa;
  let exp = q.exp + times;
  // Go's % keeps the sign of the dividend: exponents become multiples of 3 by lowering them.
  const r = exp % 3;
  if (r === 1 || r === -2) {
    amount *= 10n;
    exp -= 1;
  } else if (r === 2 || r === -1) {
    amount *= 100n;
    exp -= 2;
  }
  if (exp === 0) return amount.toString();
  if (format === 'DecimalSI') {
    const suffix = decimalByExp.get(exp);
    if (suffix !== undefined) return `${amount}${suffix}`;
  }
  return `${amount}e${exp}`;
}

/** Canonical form of a quantity string or number; undefined when invalid. */
export function canonicalQuantity(v: string | number): string | undefined {
  const q = parseQuantity(v);
  return q ? formatQuantity(q) : undefined;
}
