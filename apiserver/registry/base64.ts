/**
 * Base64 as Go's encoding/json decodes []byte fields: standard alphabet with padding; CR and LF are
 * ignored (StdEncoding.Decode skips them).
 */
const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decoded length in bytes, or -1 when not valid base64. */
export function base64DecodedLength(s: string): number {
  const clean = s.replace(/[\r\n]/g, '');
  if (!B64.test(clean)) return -1;
  return Buffer.from(clean, 'base64').length;
}

/** Decodes valid base64; undefined otherwise. */
export function decodeBase64(s: string): Buffer | undefined {
  const clean = s.replace(/[\r\n]/g, '');
  return B64.test(clean) ? Buffer.from(clean, 'base64') : undefined;
}
