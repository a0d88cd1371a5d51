/** metav1.MicroTime's wire form (RFC 3339 with microseconds), used by Lease renewTime and acquireTime. */
export function rfc3339Micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
