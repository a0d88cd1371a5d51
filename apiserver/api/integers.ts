/**
 * Integers as upstream's Go types bound them (int32, int64) and as JavaScript holds them. A
 * double represents every integer of magnitude up to 2^53 - 1 (Number.MAX_SAFE_INTEGER) exactly,
 * but an int64 reaches 2^63 - 1: JSON.parse rounds 9007199254740993 to 9007199254740992 without a
 * word, and a value such as 1e20 is an integral double that no int64 can hold. Code that accepts
 * an int64 from a client therefore either keeps the text (as BigInt) or refuses what it cannot
 * hold exactly; it never stores a rounded value.
 */

export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt's base-10 syntax. */
const INT64_TEXT = /^[+-]?\d+$/;

/**
 * Go's strconv.ParseInt(s, 10, 64): an optional sign, then decimal digits (no spaces, no
 * underscores, no exponent), within int64. Undefined for anything else.
 */
export function parseInt64(s: string): bigint | undefined {
  if (!INT64_TEXT.test(s)) return undefined;
  // Leading zeros aside, more than 19 digits cannot be an int64; skip BigInt on hostile lengths.
  if (s.replace(/^[+-]?0*/, '').length > 19) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** Why text is not an int64, in the words of Go's strconv errors ("invalid syntax", "value out of range"). */
export function int64TextError(s: string): string | undefined {
  if (!INT64_TEXT.test(s)) return 'invalid syntax';
  return parseInt64(s) === undefined ? 'value out of range' : undefined;
}

/**
 * An int64 moved into the range a double holds exactly. For quantities whose meaning does not
 * change past that range (a list limit of 2^60 and one of 2^53 - 1 both mean "all"), so callers
 * and storage backends only ever see integers they can bind.
 */
export function clampToSafeInteger(n: bigint): number {
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) return Number.MAX_SAFE_INTEGER;
  if (n < BigInt(Number.MIN_SAFE_INTEGER)) return Number.MIN_SAFE_INTEGER;
  return Number(n);
}

/**
 * The longest whole number of seconds Go's time.Duration (int64 nanoseconds) holds, about 292
 * years. Upstream turns a grace period into a deadline with such a Duration (it overflows past
 * this); for us now plus this many seconds is still a valid Date with a four-digit year.
 */
export const MAX_DURATION_SECONDS = 9_223_372_036;
