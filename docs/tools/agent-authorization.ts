/**
 * Renders docs/reference/agent-authorization.md from the agent's own path → sub-resource table
 * (agent/server/request-attributes.ts, NODE_PATH_RULES), so the page cannot differ from what the
 * agent asks the API server. Pure: returns the text.
 */
import { DEFAULT_SUBRESOURCE, NODE_PATH_RULES } from '../../agent/server/request-attributes';

/** Markdown table cells must not hold raw pipes or newlines. */
function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function agentAuthorizationReference(banner: string): string {
  const rows = NODE_PATH_RULES.map(
    (r) =>
      `| \`${r.path}\` | \`nodes/${r.subresource}\` | ${r.fallback ? `\`nodes/${r.fallback}\`` : ''} | ${cell(r.serves) || '(not served: 404 after authorization)'} | ${cell(r.note)} |`,
  );
  return [
    banner,
    '# svc-node request authorization reference',
    '',
    'With `authorization.mode: Webhook` svc-node asks the API server, by a SubjectAccessReview, whether',
    'the caller may use the resource `nodes` (group `""`, name: this node) with the sub-resource below',
    'and the verb of the HTTP method (GET and HEAD `get`, POST `create`, PUT `update`, PATCH `patch`,',
    'DELETE `delete`). A path is the row\'s path or anything below it (`/logs/syslog` is `/logs`,',
    '`/logsx` is not); the first matching row wins. Where a fallback is given, a denied request is asked',
    'again with it, so roles written before fine-grained authorization keep working. Members of',
    '`system:masters` are allowed without a review. The mapping follows upstream\'s kubelet',
    '(`GetRequestAttributes` with `KubeletFineGrainedAuthz`).',
    '',
    '| Path | Sub-resource | Fallback | Served by svc-node | Source |',
    '|---|---|---|---|---|',
    ...rows,
    `| any other path | \`nodes/${DEFAULT_SUBRESOURCE}\` | | (404 after authorization) | upstream: the default |`,
    '',
  ].join('\n');
}
