/**
 * The layering of both daemons (docs/architecture.md, "Layers"), checked by `npm run lint:deps`.
 *
 * Each daemon is a list of ranks, top to bottom; a rank holds one or more folders. A file may
 * import files of its own folder and of any lower rank. Importing a higher rank is an upward
 * import; importing another folder of the same rank is a sideways import: both are refused, so
 * folders of one rank stay independent of each other. Tests, benches and docs tools sit above
 * everything and are not checked here (they may import any layer).
 */

/** svc-apiserver, top to bottom. */
const apiserver = [
  ['main.ts'],
  ['wiring'], // assemblers: authenticator, authorizer chain, router, control-loop set
  ['controllers', 'tools'],
  ['scheduler'], // controllers reuse its taint and node-fit helpers
  ['handlers', 'aggregator'], // aggregator: the proxy to aggregated API servers and their table
  ['filters'], // impersonation, audit, request-info rewrites: between authn and authz upstream
  ['authn', 'authz', 'admission'],
  // The HTTP codec: request info, decode, negotiation, respond, discovery, OpenAPI, health, table.
  // Below authn/authz/admission rather than above: authorization attributes carry the parsed
  // RequestInfo (as upstream's authorizer attributes are built from endpoints/request.RequestInfo,
  // a package below the authorizers), and the codec itself needs only registry/validation/storage.
  ['server'],
  ['store'], // ObjectStore, watch cache, the informer adapter
  ['apply'], // field ownership on typed field sets: managedFields of every write, server-side apply
  ['registry', 'validation'],
  ['patch'], // field validation checks patch bodies with the patchers' own JSON reader
  ['storage', 'cel', 'pki', 'metrics', 'config', 'codec'], // codec: protobuf wire form, driven by api/schema
  ['api'], // wire types, errors, the user identity, well-known names
];

/** svc-node, top to bottom: main, the feature folders (in their own order), then the base. */
const agent = [
  ['main.ts'],
  ['wiring'], // the start-up phases main runs in order
  ['server'],
  ['housekeeping'],
  ['checkpoint'],
  ['podresources'],
  ['pod'],
  ['devices'],
  ['netpol'], // NetworkPolicy enforcement (nftables; uses the proxy's runner)
  ['proxy'], // the network proxy (Services into nftables)
  ['pluginregistry', 'seccomp', 'logs', 'metrics', 'stats', 'dns'], // dns: the node-local cluster DNS server and pods' DNS settings
  ['podnet'], // the pod network: CNI config and routes to other nodes' podCIDRs
  ['bootstrap'],
  ['node'],
  ['client', 'cri'],
  ['platform'],
  ['config'], // depends on nothing but api/
  ['api'], // the core/v1 wire shapes several feature folders share
  ['errors.ts'], // the error catalogue every agent error extends; imports nothing
];

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A path pattern for one folder (or top-level file) of a daemon. */
const at = (root, name) => `^${root}/${esc(name)}${name.endsWith('.ts') ? '$' : '/'}`;

/** Rules refusing upward and sideways imports for one daemon's ranks. */
function layerRules(root, ranks) {
  const rules = [];
  ranks.forEach((rank, i) => {
    const above = ranks.slice(0, i).flat();
    for (const name of rank) {
      const peers = rank.filter((n) => n !== name);
      const refused = [...above, ...peers];
      if (refused.length === 0) continue;
      rules.push({
        name: `${root}-layer-${name.replace('.ts', '')}`,
        comment: `${root}/${name} may import only its own folder and lower ranks (docs/architecture.md, Layers)`,
        severity: 'error',
        from: { path: at(root, name) },
        to: { path: refused.map((n) => at(root, n)) },
      });
    }
  });
  return rules;
}

module.exports = {
  forbidden: [
    ...layerRules('apiserver', apiserver),
    ...layerRules('agent', agent),
    {
      name: 'no-circular',
      comment: 'No import cycles between files.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'agent-uses-only-apiserver-api',
      comment: 'agent/ imports only apiserver/api/ (and common/) from the rest of the repository.',
      severity: 'error',
      from: { path: '^agent/' },
      to: { path: '^(apiserver/(?!api/)|bench/|test/|docs/)' },
    },
    {
      name: 'apiserver-not-agent',
      comment: 'svc-apiserver never imports the node agent.',
      severity: 'error',
      from: { path: '^apiserver/' },
      to: { path: '^(agent/|bench/|test/|docs/)' },
    },
    {
      name: 'common-is-the-bottom',
      comment: 'common/ is shared by both daemons and imports neither.',
      severity: 'error',
      from: { path: '^common/' },
      to: { path: '^(agent|apiserver|bench|test|docs)/' },
    },
    {
      name: 'cri-through-its-index',
      comment: 'Outside agent/cri/, the runtime is reached through agent/cri/index.ts.',
      severity: 'error',
      from: { path: '^agent/', pathNot: '^agent/cri/' },
      to: { path: '^agent/cri/', pathNot: '^agent/cri/index\\.ts$' },
    },
  ],
  options: {
    includeOnly: '^(agent|apiserver|common)/',
    doNotFollow: { path: 'node_modules' },
    // type-only imports couple layers as much as value imports do
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
