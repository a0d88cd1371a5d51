import { ApiError } from '../api/errors';

/**
 * The CBOR encoding's media types and framing, as upstream's apimachinery CBOR serializer
 * (KEP-4222, alpha behind CBORServingAndStorage since 1.32): a body is one data item enclosed in
 * the self-described CBOR tag 55799, so it starts with 0xd9d9f7; a watch is a CBOR Sequence
 * (RFC 8742) of such items, each a WatchEvent map {type, object}.
 */

export const CBOR_MEDIA_TYPE = 'application/cbor';
/** Watch responses: one CBOR data item per event, no other framing. */
export const CBOR_SEQ_MEDIA_TYPE = 'application/cbor-seq';
/** Server-side apply in CBOR (spec 4.3), only when CBOR is enabled. */
export const APPLY_PATCH_CBOR_MEDIA_TYPE = 'application/apply-patch+cbor';

/** The head of tag 55799 (RFC 8949 3.4.6, self-described CBOR): upstream's magic number for CBOR. */
export const SELF_DESCRIBED_CBOR = Buffer.from([0xd9, 0xd9, 0xf7]);
export const TAG_SELF_DESCRIBED = 55799;

/** Tags with a meaning here (RFC 8949 3.4): times, bignums, expected later encodings. */
export const TAG_TIME_TEXT = 0;
export const TAG_TIME_EPOCH = 1;
export const TAG_BIGNUM_POS = 2;
export const TAG_BIGNUM_NEG = 3;
export const TAG_LATER_BASE64URL = 21;
export const TAG_LATER_BASE64 = 22;
export const TAG_LATER_BASE16 = 23;

/** Whether a body starts with the self-described CBOR tag (upstream's RecognizesData). */
export function isSelfDescribedCbor(body: Uint8Array): boolean {
  return body.length >= 3 && body[0] === 0xd9 && body[1] === 0xd9 && body[2] === 0xf7;
}

/** A body that is not the CBOR this server accepts: a 400 naming what and where. */
export function cborError(why: string, path = ''): ApiError {
  return new ApiError('BadRequest', `the body of the request could not be decoded as CBOR: ${why}${path ? ` at ${path}` : ''}`);
}
