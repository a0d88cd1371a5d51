import { ApiError } from '../api/errors';

/**
 * The opaque continue token of chunked lists (4.7): the list's revision and the last key returned.
 * Like upstream's it is base64 JSON; it expires when its revision is compacted (5 minutes, section 8).
 */
export interface ContinueToken {
  revision: number;
  startAfter: string;
}

export function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.svc.io/v1', rv: t.revision, start: t.startAfter })).toString('base64url');
}

export function decodeContinue(token: string): ContinueToken {
  try {
    const j = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { v?: unknown; rv?: unknown; start?: unknown };
    if (j.v === 'meta.svc.io/v1' && typeof j.rv === 'number' && j.rv > 0 && typeof j.start === 'string') {
      return { revision: j.rv, startAfter: j.start };
    }
  } catch {
    // fall through to the error below
  }
  throw new ApiError('BadRequest', 'continue key is not valid: incorrect encoded start resourceVersion (version meta.svc.io/v1)');
}
