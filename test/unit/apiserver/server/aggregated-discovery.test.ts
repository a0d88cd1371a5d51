import test from 'ava';
import { builtinTypes, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import { aggregatedDiscovery } from '../../../../apiserver/server/aggregated-discovery';
import { Discovery } from '../../../../apiserver/server/discovery';
import { GroupAliases } from '../../../../apiserver/server/group-alias';

// Issue 17, item 4: aggregated discovery (apidiscovery v2), negotiated by Accept, built from the same types as the legacy documents.

const KUBECTL_133 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const KUBECTL_127 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

test('Accept: kubectl 1.30+ gets v2, kubectl 1.27 v2beta1, the svc.io twin its own; everyone else the legacy documents', (t) => {
  t.deepEqual(aggregatedDiscovery(KUBECTL_133), {
    group: 'apidiscovery.k8s.io',
    version: 'v2',
    apiVersion: 'apidiscovery.k8s.io/v2',
    contentType: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  });
  t.is(aggregatedDiscovery(KUBECTL_127)?.contentType, 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList');
  t.is(aggregatedDiscovery('application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.svc.io')?.apiVersion, 'apidiscovery.svc.io/v2');
  for (const legacy of [undefined, '', 'application/json', 'application/json, */*', '*/*', 'application/yaml']) {
    t.is(aggregatedDiscovery(legacy), undefined, String(legacy));
  }
  // Client order decides; q lowers a range; unknown versions, kinds and protobuf ranges are passed over.
  t.is(aggregatedDiscovery('application/json,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'), undefined);
  t.is(aggregatedDiscovery('application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList')?.version, 'v2');
  t.is(aggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json'), undefined);
  t.is(aggregatedDiscovery('application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList')?.version, 'v2');
  t.is(aggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscovery'), undefined);
});

const virtual = (g: string, r: string) => r.endsWith('reviews') && (g === 'authorization.svc.io' || g === 'authentication.svc.io');
const discovery = new Discovery(() => builtinTypes, (t) => virtual(t.group, t.resource));

type Doc = { kind: string; apiVersion: string; items: Array<{ metadata: { name?: string }; versions: Array<{ version: string; freshness: string; resources: Array<Record<string, any>> }> }> };

test('/api: one item, the core group (no name), v1 with every core resource', (t) => {
  const doc = discovery.aggregated(true, 'apidiscovery.k8s.io/v2') as Doc;
  t.is(doc.kind, 'APIGroupDiscoveryList');
  t.is(doc.apiVersion, 'apidiscovery.k8s.io/v2');
  t.is(doc.items.length, 1);
  t.is(doc.items[0].metadata.name, undefined);
  t.deepEqual(doc.items[0].versions.map((v) => [v.version, v.freshness]), [['v1', 'Current']]);
  const pods = doc.items[0].versions[0].resources.find((r) => r.resource === 'pods')!;
  t.deepEqual(pods.responseKind, { group: '', version: 'v1', kind: 'Pod' });
  t.is(pods.scope, 'Namespaced');
  t.is(pods.singularResource, 'pod');
  t.deepEqual(pods.shortNames, ['po']);
  t.deepEqual(pods.verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  t.deepEqual(pods.subresources, [{ subresource: 'status', responseKind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] }]);
  const nodes = doc.items[0].versions[0].resources.find((r) => r.resource === 'nodes')!;
  t.is(nodes.scope, 'Cluster');
  const cms = doc.items[0].versions[0].resources.find((r) => r.resource === 'configmaps')!;
  t.is(cms.subresources, undefined);
});

test('/apis: every group in the legacy order, each version with the resources of the legacy document, the reviews create-only', (t) => {
  const doc = discovery.aggregated(false, 'apidiscovery.k8s.io/v2beta1') as Doc;
  t.is(doc.apiVersion, 'apidiscovery.k8s.io/v2beta1');
  const legacy = discovery.groups() as { groups: Array<{ name: string; versions: Array<{ version: string }> }> };
  t.deepEqual(doc.items.map((i) => i.metadata.name), legacy.groups.map((g) => g.name));
  for (const item of doc.items) {
    const group = legacy.groups.find((g) => g.name === item.metadata.name)!;
    t.deepEqual(item.versions.map((v) => v.version), group.versions.map((v) => v.version));
    for (const v of item.versions) {
      const list = discovery.resources(item.metadata.name!, v.version) as { resources: Array<{ name: string; verbs: string[] }> };
      // Every legacy entry is an aggregated resource, or a sub-resource of one, with the same verbs.
      for (const r of list.resources) {
        const [resource, sub] = r.name.split('/');
        const agg = v.resources.find((x) => x.resource === resource)!;
        t.truthy(agg, r.name);
        const verbs = sub ? agg.subresources.find((s: { subresource: string }) => s.subresource === sub).verbs : agg.verbs;
        t.deepEqual(verbs, r.verbs, r.name);
      }
      t.is(v.resources.length, list.resources.filter((r) => !r.name.includes('/')).length);
    }
  }
  const ssar = doc.items.find((i) => i.metadata.name === 'authorization.svc.io')!.versions[0].resources.find((r) => r.resource === 'selfsubjectaccessreviews')!;
  t.deepEqual(ssar.verbs, ['create']);
  t.is(ssar.subresources, undefined);
  t.deepEqual(ssar.responseKind, { group: 'authorization.svc.io', version: 'v1', kind: 'SelfSubjectAccessReview' });
});

test('pods/eviction is listed as a create-only policy/v1 Eviction in both documents (kubectl drain evicts only then)', (t) => {
  const eviction = { name: 'eviction', group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] };
  const d = new Discovery(
    () => builtinTypes,
    () => false,
    () => false,
    (ty) => (ty.group === '' && ty.resource === 'pods' ? [eviction] : []),
  );
  const legacy = d.resources('', 'v1') as { resources: Array<Record<string, unknown>> };
  t.deepEqual(legacy.resources.find((r) => r.name === 'pods/eviction'), { name: 'pods/eviction', singularName: '', namespaced: true, group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] });
  const agg = d.aggregated(true, 'apidiscovery.k8s.io/v2') as Doc;
  const pods = agg.items[0].versions[0].resources.find((r) => r.resource === 'pods')!;
  t.deepEqual(pods.subresources, [
    { subresource: 'status', responseKind: { group: '', version: 'v1', kind: 'Pod' }, verbs: ['get', 'patch', 'update'] },
    { subresource: 'eviction', responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' }, verbs: ['create'] },
  ]);
  t.is(agg.items[0].versions[0].resources.find((r) => r.resource === 'nodes')!.subresources.length, 1);
});

test('with both group names served, the svc.io names are listed without verbs, short names or categories; each resource has verbs once, under its k8s.io name', (t) => {
  const registry = new ResourceRegistry();
  for (const bt of builtinTypes) registry.register(bt);
  const aliases = new GroupAliases(registry.groups().map((g) => g.name), true);
  const d = new Discovery(
    () => aliases.documentTypes(registry.all()),
    (x) => virtual(aliases.canonicalOf(x.group) ?? x.group, x.resource),
    (x) => aliases.isSecondName(x.group),
  );
  const doc = d.aggregated(false, 'apidiscovery.k8s.io/v2') as Doc;
  const group = (name: string) => doc.items.find((i) => i.metadata.name === name)!.versions[0].resources;
  const roles = (g: string) => group(g).find((r) => r.resource === 'roles')!;
  t.deepEqual(roles('rbac.authorization.k8s.io').verbs, ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
  t.deepEqual(roles('rbac.authorization.svc.io').verbs, []);
  t.deepEqual(roles('rbac.authorization.svc.io').responseKind, { group: 'rbac.authorization.svc.io', version: 'v1', kind: 'Role' });
  const csr = group('certificates.svc.io').find((r) => r.resource === 'certificatesigningrequests')!;
  t.is(csr.shortNames, undefined);
  t.deepEqual(csr.subresources, [{ subresource: 'status', responseKind: { group: 'certificates.svc.io', version: 'v1', kind: 'CertificateSigningRequest' }, verbs: [] }]);
  t.deepEqual(group('certificates.k8s.io').find((r) => r.resource === 'certificatesigningrequests')!.shortNames, ['csr']);
  t.deepEqual(group('authorization.k8s.io').find((r) => r.resource === 'selfsubjectaccessreviews')!.verbs, ['create']);
  // What kubectl api-resources prints (resources with verbs, sub-resources left out): each once.
  const printed = doc.items.flatMap((i) => i.versions[0].resources.filter((r) => r.verbs.length > 0).map((r) => `${r.resource}.${r.responseKind.kind}`));
  t.is(new Set(printed).size, printed.length, printed.filter((p, i) => printed.indexOf(p) !== i).join(' '));
  t.false(doc.items.some((i) => i.metadata.name!.endsWith('.svc.io') && i.versions[0].resources.some((r) => r.verbs.length > 0)));
  // The legacy documents say the same.
  const legacy = d.resources('coordination.svc.io', 'v1') as { resources: Array<{ name: string; verbs: string[] }> };
  t.deepEqual(legacy.resources.map((r) => [r.name, r.verbs]), [['leases', []]]);
  t.true((d.groups() as { groups: Array<{ name: string }> }).groups.some((g) => g.name === 'coordination.svc.io'), 'the group is still listed');
  // With the k8s.io names off, the svc.io names have their verbs.
  const off = new GroupAliases(registry.groups().map((g) => g.name), false);
  t.false(off.isSecondName('rbac.authorization.svc.io'));
  t.true(aliases.isSecondName('rbac.authorization.svc.io'));
  t.false(aliases.isSecondName('rbac.authorization.k8s.io'));
  t.false(aliases.isSecondName('apps'));
});
