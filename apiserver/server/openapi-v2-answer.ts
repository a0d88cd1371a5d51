import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';
import { OPENAPI_V2_PROTOBUF, openApiV2Protobuf } from './openapi-protobuf';

type Json = Record<string, unknown>;

/** What /openapi/v2 answers: status, headers, and the body unless it is a 304. */
export interface OpenApiV2Answer {
  status: 200 | 304;
  headers: Record<string, string>;
  body?: Buffer;
}

/**
 * Bodies below this are sent as they are: the size under which upstream's gzip handler
 * (NYTimes/gziphandler's DefaultMinSize) leaves a response uncompressed.
 */
const GZIP_MIN_BYTES = 1400;

interface Rendered {
  text: string;
  etag: string;
  lastModified: string;
  /** Per form, built when first asked for: the body, and its gzip once a client accepts that. */
  bodies: Map<'json' | 'protobuf', { plain: Buffer; gzip?: Buffer }>;
}

/**
 * The /openapi/v2 document as upstream's kube-openapi handler serves it, for clients that cache it
 * (kubectl keeps it in its HTTP cache under --cache-dir and asks again with If-None-Match):
 * - an ETag, the quoted upper-case hex SHA-512 of the JSON document, the same for the JSON and the
 *   protobuf form (upstream computes one from the JSON), and a Last-Modified of when this document
 *   was first served;
 * - a 304 without a body when If-None-Match names the ETag (weak comparison, a list, or `*`), or,
 *   without If-None-Match, when If-Modified-Since is not before Last-Modified (Go's
 *   http.ServeContent, which upstream answers through);
 * - gzip (Content-Encoding: gzip, Vary: Accept-Encoding) when Accept-Encoding allows it and the body
 *   is 1,400 bytes or more (upstream wraps the handler in a gzip handler; a document is hundreds of
 *   KB, a tenth of that compressed).
 * The bodies, their gzip and the ETag are kept for the last document: it changes only with the
 * served types, and a whole document hashed, converted and compressed is tens of milliseconds.
 */
export class OpenApiV2Answers {
  private last: Rendered | undefined;

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** The answer to a GET of doc in the negotiated form, given the request's headers. */
  answer(doc: Json, as: 'json' | 'protobuf', req: IncomingHttpHeaders): OpenApiV2Answer {
    const r = this.rendered(doc);
    const headers: Record<string, string> = { Vary: 'Accept', 'Cache-Control': 'no-cache, private', ETag: r.etag, 'Last-Modified': r.lastModified };
    if (notModified(r, req)) {
      // As Go's writeNotModified: no representation headers; Last-Modified only without an ETag.
      delete headers['Last-Modified'];
      return { status: 304, headers };
    }
    let body = r.bodies.get(as);
    if (!body) r.bodies.set(as, (body = { plain: as === 'json' ? Buffer.from(r.text) : openApiV2Protobuf(doc) }));
    headers['Content-Type'] = as === 'json' ? 'application/json' : OPENAPI_V2_PROTOBUF;
    if (body.plain.length >= GZIP_MIN_BYTES && acceptsGzip(req['accept-encoding'])) {
      body.gzip ??= gzipSync(body.plain);
      headers['Content-Encoding'] = 'gzip';
      headers.Vary = 'Accept, Accept-Encoding';
      headers['Content-Length'] = String(body.gzip.length);
      return { status: 200, headers, body: body.gzip };
    }
    headers['Content-Length'] = String(body.plain.length);
    return { status: 200, headers, body: body.plain };
  }

  private rendered(doc: Json): Rendered {
    const text = JSON.stringify(doc);
    if (this.last?.text !== text) {
      const etag = `"${createHash('sha512').update(text).digest('hex').toUpperCase()}"`;
      // HTTP dates have whole seconds; a 304 by date compares at that resolution.
      this.last = { text, etag, lastModified: this.now().toUTCString(), bodies: new Map() };
    }
    return this.last;
  }
}

/** If-None-Match first (weak comparison: W/ is ignored, `*` matches), else If-Modified-Since, as Go's ServeContent. */
function notModified(r: Rendered, req: IncomingHttpHeaders): boolean {
  const inm = req['if-none-match'];
  if (inm !== undefined) {
    return inm.split(',').some((tag) => {
      const t = tag.trim();
      return t === '*' || (t.startsWith('W/') ? t.slice(2) : t) === r.etag;
    });
  }
  const ims = req['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return Number.isFinite(since) && Date.parse(r.lastModified) <= since;
}

/** Whether Accept-Encoding allows gzip: gzip with a quality above 0, or, when gzip is not named, `*` so. */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  const quality = new Map<string, number>();
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    quality.set(coding.trim(), q ? Number(q.slice(2)) : 1);
  }
  const q = quality.get('gzip') ?? quality.get('*');
  return q !== undefined && q > 0;
}
