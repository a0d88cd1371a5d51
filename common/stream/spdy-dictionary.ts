/**
 * The preset zlib dictionary of SPDY/3 header compression (SPDY draft 3, 2.6.10.1): a run of
 * header names and values, each preceded by its length as a 32-bit big-endian integer, then a
 * run of common value fragments without lengths. Peers must use these exact 1,423 bytes (zlib
 * names the dictionary by its Adler-32, and a different one fails the first header block), so
 * the unit test pins the length and the checksum.
 */

/** The length-prefixed entries, in the draft's order. */
const ENTRIES = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
  'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding',
  'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag',
  'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive',
  'origin',
];

/** The unprefixed tail: status codes, reason phrases, dates and common values. */
const TAIL = [
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505',
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized',
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable',
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT',
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,',
  'publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.',
].join('');

function build(): Buffer {
  const parts: Buffer[] = [];
  for (const e of ENTRIES) {
    const len = Buffer.allocUnsafe(4);
    len.writeUInt32BE(e.length, 0);
    parts.push(len, Buffer.from(e, 'latin1'));
  }
  parts.push(Buffer.from(TAIL, 'latin1'));
  return Buffer.concat(parts);
}

export const SPDY3_DICTIONARY: Buffer = build();
