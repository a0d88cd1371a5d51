/** Go's RFC 3339 form without fractional seconds, as metav1.Time marshals. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
