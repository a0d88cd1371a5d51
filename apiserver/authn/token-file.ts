import { readFileSync } from 'node:fs';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { bearerToken, type Authenticator } from './authenticator';
import type { UserInfo } from './user';

/**
 * Static token file (5.1, --token-auth-file): CSV lines token,user,uid["group1,group2",...].
 * Read once at start; tokens are compared by SHA-256 digest in constant time.
 */
export class TokenFileAuthenticator implements Authenticator {
  readonly name = 'token-file';
  private readonly tokens = new Map<string, UserInfo>();

  constructor(entries: ReadonlyArray<{ token: string; user: UserInfo }>) {
    for (const e of entries) this.tokens.set(digest(e.token), e.user);
  }

  static fromFile(path: string): TokenFileAuthenticator {
    return new TokenFileAuthenticator(parseTokenFile(readFileSync(path, 'utf8'), path));
  }

  async authenticate(req: IncomingMessage): Promise<UserInfo | null> {
    const token = bearerToken(req);
    if (!token) return null;
    const d = digest(token);
    for (const [k, user] of this.tokens) {
      if (timingSafeEqual(Buffer.from(k, 'hex'), Buffer.from(d, 'hex'))) return user;
    }
    return null;
  }
}

function digest(t: string): string {
  return createHash('sha256').update(t).digest('hex');
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
