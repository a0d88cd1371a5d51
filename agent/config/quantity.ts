/**
 * Resource quantities as Kubernetes writes them ("100Mi", "1.5Gi", "500m", "1e3", "10G").
 * Only the value is needed here (bytes, cores, counts), not canonical re-serialisation.
 */

const binary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const decimal: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

const pattern = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** Parses a quantity to its numeric value; throws Error naming the bad text. */
export function parseQuantity(text: string): number {
  const m = pattern.exec(text);
  if (!m) throw new Error(`invalid quantity ${JSON.stringify(text)}: must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  const sign = m[1] === '-' ? -1 : 1;
  const num = Number(m[2]);
  const suffix = m[3] ?? '';
  let scale: number;
  if (suffix in binary) scale = binary[suffix]!;
  else if (/^[eE]/.test(suffix)) scale = 10 ** Number(suffix.slice(1));
  else scale = decimal[suffix]!;
  return sign * num * scale;
}
