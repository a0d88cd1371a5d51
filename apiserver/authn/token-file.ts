import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { bearerToken, type BearerTokenMethod } from './authenticator';
import type { UserInfo } from '../api/user';

/**
 * Static token file (5.1, --token-auth-file): CSV lines token,user,uid["group1,group2",...].
 * Read once at start into a map keyed by the token, as upstream's tokenfile authenticator does
 * (a map lookup; an earlier version hashed every presented token with SHA-256 and compared
 * digests, which cost more than the rest of authentication for every bearer token, bootstrap
 * and service account tokens included, since this method is asked first).
 */
export class TokenFileAuthenticator implements BearerTokenMethod {
  readonly name = 'token-file';
  private readonly tokens = new Map<string, UserInfo>();
  /**
   * The lengths of the file's tokens: a token of another length is not looked up at all. A map
   * lookup hashes the whole presented string, which for a kilobyte-long service account JWT
   * (asked here first, on every request) cost more than that method's own cached check. What
   * this reveals through timing, that no file token has the presented length, the map lookup
   * reveals too.
   */
  private readonly lengths = new Set<number>();

  constructor(entries: ReadonlyArray<{ token: string; user: UserInfo }>) {
    for (const e of entries) {
      this.tokens.set(e.token, e.user);
      this.lengths.add(e.token.length);
    }
  }

  static fromFile(path: string): TokenFileAuthenticator {
    return new TokenFileAuthenticator(parseTokenFile(readFileSync(path, 'utf8'), path));
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const token = bearerToken(req);
    return token ? this.authenticateBearer(token) : null;
  }

  authenticateBearer(token: string): Promise<UserInfo | null> {
    return Promise.resolve(this.lengths.has(token.length) ? (this.tokens.get(token) ?? null) : null);
  }
}

/** Parses the CSV (quoted fields allowed; a quoted last field may hold several comma-separated groups). */
export function parseTokenFile(text: string, path: string): Array<{ token: string; user: UserInfo }> {
  const out: Array<{ token: string; user: UserInfo }> = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const fields = splitCsv(line);
    if (fields.length < 3 || !fields[0] || !fields[1]) {
      throw new Error(`${path}:${i + 1}: a token line needs at least 3 columns: token,user,uid`);
    }
    const groups = fields.slice(3).flatMap((g) => g.split(',')).map((g) => g.trim()).filter((g) => g !== '');
    out.push({ token: fields[0], user: { username: fields[1], uid: fields[2], groups } });
  });
  return out;
}

function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}
