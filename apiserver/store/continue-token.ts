import { ApiError } from '../api/errors';

/**
 * The opaque continue token of chunked lists (4.7): the list's revision and the last key returned.
 * Like upstream's it is base64 JSON; it expires when its revision is compacted (5 minutes, section 8).
 */
export interface ContinueToken {
  revision: number;
  startAfter: string;
}

const VERSION = 'meta.svc.io/v1';

export function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: VERSION, rv: t.revision, start: t.startAfter })).toString('base64url');
}

/**
 * Decodes a token a client sent back; anything this server could not have issued is a 400 with
 * upstream's "continue key is not valid" wording (storage.DecodeContinue), never a storage error:
 * the revision must be a positive safe integer (a fraction, 1e300 or a string would reach the
 * storage query), the key non-empty and clean (no `.`/`..` segments or doubled slashes, as
 * upstream's path.Clean check). Whether the key lies in the list's own prefix is the list's check.
 */
export function decodeContinue(token: string): ContinueToken {
  let j: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    j = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as typeof j;
  } catch {
    throw invalidRevision();
  }
  if (typeof j !== 'object' || j === null) throw invalidRevision();
  if (j.v !== VERSION) throw new ApiError('BadRequest', 'continue key is not valid: server does not recognize this encoded version');
  if (typeof j.rv !== 'number' || !Number.isSafeInteger(j.rv) || j.rv <= 0) throw invalidRevision();
  if (typeof j.start !== 'string' || j.start === '') {
    throw new ApiError('BadRequest', `continue key is not valid: encoded start key empty (version ${VERSION})`);
  }
  if (!isCleanKey(j.start)) throw new ApiError('BadRequest', 'continue key is not valid');
  return { revision: j.rv, startAfter: j.start };
}

function invalidRevision(): ApiError {
  return new ApiError('BadRequest', `continue key is not valid: incorrect encoded start resourceVersion (version ${VERSION})`);
}

/** An absolute key whose segments are all names: what path.Clean leaves unchanged. */
function isCleanKey(key: string): boolean {
  if (!key.startsWith('/')) return false;
  return key
    .slice(1)
    .split('/')
    .every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}
