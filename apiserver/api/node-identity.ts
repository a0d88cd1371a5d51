import type { UserInfo } from './user';
import { NODE_USER_PREFIX, NODES_GROUP } from './well-known';

/**
 * Upstream's default NodeIdentifier: a node is a user named system:node:<name> in group
 * system:nodes. Returns the node name ('' when the name part is empty), or undefined for anyone
 * else — the Node authorizer and NodeRestriction ignore those (A.7).
 */
export function nodeName(user: UserInfo): string | undefined {
  if (!user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}
