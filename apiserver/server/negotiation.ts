import { ApiError } from '../api/errors';
import { APPLY_PATCH_CBOR_MEDIA_TYPE, CBOR_MEDIA_TYPE, CBOR_SEQ_MEDIA_TYPE } from '../codec/cbor-wire';
import { PROTOBUF_MEDIA_TYPE } from '../codec/envelope';

/** What a response is rendered as (4.5). */
export type Rendering =
  | { kind: 'json' }
  | { kind: 'yaml' }
  /** Kubernetes protobuf (the k8s\0 envelope); watches stream length-prefixed frames. */
  | { kind: 'protobuf' }
  /** CBOR (CBORServingAndStorage): one self-described data item; watches stream a CBOR Sequence (application/cbor-seq). */
  | { kind: 'cbor' }
  /** Server-side Table; group is the one the client asked for (meta.svc.io, or meta.k8s.io from stock kubectl). */
  | { kind: 'table'; group: string; version: string; includeObject: 'None' | 'Metadata' | 'Object' };

interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

/**
 * Parsed Accept headers by their text: a client sends the same header with every request (client-go
 * one per content type), so each is parsed once. Bounded: emptied when it reaches 256 headers.
 */
const parsedAccept = new Map<string, readonly MediaRange[]>();
const PARSED_ACCEPT_MAX = 256;

/** The header's ranges by quality, highest first (stable: equal qualities keep the client's order); never mutate it. */
function acceptRanges(header: string): readonly MediaRange[] {
  let ranges = parsedAccept.get(header);
  if (!ranges) {
    if (parsedAccept.size >= PARSED_ACCEPT_MAX) parsedAccept.clear();
    ranges = parseAccept(header).sort((a, b) => b.q - a.q);
    parsedAccept.set(header, ranges);
  }
  return ranges;
}

function parseAccept(header: string): MediaRange[] {
  return header
    .split(',')
    .map((part) => {
      const [type, ...ps] = part.trim().split(';');
      const params: Record<string, string> = {};
      for (const p of ps) {
        const [k, v = ''] = p.split('=');
        params[k.trim().toLowerCase()] = v.trim().replace(/^"|"$/g, '');
      }
      const q = params.q !== undefined ? Number(params.q) : 1;
      return { type: type.trim().toLowerCase(), params, q: Number.isFinite(q) ? q : 0 };
    })
    .filter((m) => m.type !== '' && m.q > 0);
}

/** What a response can be rendered as besides JSON and YAML. */
export interface RenderingOptions {
  tableAllowed: boolean;
  includeObject?: string;
  /** The response has a protobuf form (a watch accepts `;stream=watch`). */
  protobuf?: boolean;
  /** CBOR is served (the CBORServingAndStorage gate). */
  cbor?: boolean;
  /** A watch: application/cbor-seq is accepted too (spec 4.5), and application/cbor answers it, as upstream. */
  watch?: boolean;
}

/**
 * Picks the first acceptable rendering from the Accept list in client order (the fallback lists of
 * 4.5: "Table then json", "protobuf then json", "cbor then json"). Protobuf is offered where the
 * caller says the response has a protobuf form (`;stream=watch` is accepted for watches, a Table
 * is JSON only as kubectl asks for it); CBOR only with the gate (any response has a CBOR form; a
 * Table stays JSON); a list of only what is not offered is a 406.
 */
export function negotiate(accept: string | undefined, opts: RenderingOptions): Rendering {
  if (!accept || accept.trim() === '') return { kind: 'json' };
  const ranges = acceptRanges(accept);
  for (const m of ranges) {
    if (m.type === PROTOBUF_MEDIA_TYPE) {
      if (opts.protobuf && !m.params.as && (m.params.stream === undefined || m.params.stream === 'watch')) return { kind: 'protobuf' };
      continue;
    }
    if (m.type === CBOR_MEDIA_TYPE || (m.type === CBOR_SEQ_MEDIA_TYPE && opts.watch)) {
      if (opts.cbor && !m.params.as) return { kind: 'cbor' };
      continue;
    }
    if (m.type === 'application/json' || m.type === 'application/*' || m.type === '*/*') {
      if (m.params.as === 'Table') {
        if (!opts.tableAllowed) continue;
        const g = m.params.g ?? '';
        const v = m.params.v ?? '';
        if ((g === 'meta.svc.io' || g === 'meta.k8s.io') && (v === 'v1' || v === 'v1beta1')) {
          const io = opts.includeObject;
          return { kind: 'table', group: g, version: v, includeObject: io === 'None' || io === 'Object' ? io : 'Metadata' };
        }
        continue;
      }
      if (m.params.as) continue; // other server-side transformations (PartialObjectMetadata, discovery) are not offered
      return { kind: 'json' };
    }
    if (m.type === 'application/yaml') return { kind: 'yaml' };
  }
  const types = [
    'application/json',
    'application/yaml',
    ...(opts.protobuf ? [PROTOBUF_MEDIA_TYPE] : []),
    ...(opts.cbor ? [opts.watch ? CBOR_SEQ_MEDIA_TYPE : CBOR_MEDIA_TYPE] : []),
    'application/json;as=Table;v=v1;g=meta.svc.io',
  ];
  throw new ApiError('NotAcceptable', `only the following media types are accepted: ${types.join(', ')}`);
}

/**
 * The binary form, if any, a response that has one goes out in for this Accept header (writes,
 * errors): the first of protobuf and CBOR (when served) in the client's order, else none (JSON).
 */
export function binaryReply(accept: string | undefined, opts: { cbor?: boolean } = {}): 'protobuf' | 'cbor' | undefined {
  try {
    const kind = negotiate(accept, { tableAllowed: false, protobuf: true, cbor: opts.cbor }).kind;
    return kind === 'protobuf' || kind === 'cbor' ? kind : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a response with a protobuf form goes out as protobuf for this Accept header (writes, errors). */
export function prefersProtobuf(accept: string | undefined): boolean {
  return binaryReply(accept) === 'protobuf';
}

export type BodyFormat = 'json' | 'yaml' | 'protobuf' | 'cbor' | 'json-patch' | 'merge-patch' | 'strategic-merge-patch' | 'apply-patch' | 'apply-patch-cbor';

/**
 * The body type of a write from its Content-Type; 415 for anything not served. Protobuf whole
 * objects (POST, PUT) only where the caller decodes them (opts.protobuf); patches are never
 * protobuf, as upstream. CBOR (opts.cbor, the CBORServingAndStorage gate) for whole objects and
 * for server-side apply (application/apply-patch+cbor); there is no CBOR json-patch, merge-patch
 * or strategic-merge-patch (spec 4.3).
 */
export function bodyFormat(contentType: string | undefined, method: string, opts: { protobuf?: boolean; cbor?: boolean; strategicMerge?: boolean } = {}): BodyFormat {
  const strategic = opts.strategicMerge ?? true;
  const ct = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (method === 'PATCH') {
    switch (ct) {
      case 'application/json-patch+json':
        return 'json-patch';
      case 'application/merge-patch+json':
        return 'merge-patch';
      case 'application/strategic-merge-patch+json':
        // Custom resources have no patch strategies: upstream answers 415 for them.
        if (strategic) return 'strategic-merge-patch';
        break;
      case 'application/apply-patch+yaml':
        return 'apply-patch';
      case APPLY_PATCH_CBOR_MEDIA_TYPE:
        if (opts.cbor) return 'apply-patch-cbor';
    }
    throw new ApiError(
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml${strategic ? ', application/strategic-merge-patch+json' : ''}${opts.cbor ? `, ${APPLY_PATCH_CBOR_MEDIA_TYPE}` : ''}`,
    );
  }
  if (ct === '' || ct === 'application/json') return 'json';
  if (ct === 'application/yaml') return 'yaml';
  if (ct === PROTOBUF_MEDIA_TYPE && opts.protobuf) return 'protobuf';
  if (ct === CBOR_MEDIA_TYPE && opts.cbor) return 'cbor';
  throw new ApiError(
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml${opts.protobuf ? `, ${PROTOBUF_MEDIA_TYPE}` : ''}${opts.cbor ? `, ${CBOR_MEDIA_TYPE}` : ''}`,
  );
}
