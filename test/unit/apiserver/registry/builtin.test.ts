import test from 'ava';
import type { Schema } from '../../../../apiserver/api/schema';
import type { KObject } from '../../../../apiserver/api/types';
import { builtinTypes, makeBuiltinTypes, nameRuleFor, ResourceRegistry } from '../../../../apiserver/registry/builtin';
import { objectMetaSchema } from '../../../../apiserver/registry/common-schemas';
import { validateObjectMeta } from '../../../../apiserver/registry/meta-validation';
import { compareVersions } from '../../../../apiserver/registry/resource-registry';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { validateAgainstSchema } from '../../../../apiserver/validation/validate-schema';

const ts = '2025-03-01T12:00:00Z';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** One valid object per built-in type (before defaults), keyed group/resource. */
const samples: Record<string, KObject> = {
  '/namespaces': { metadata: { name: 'team-a' } },
  '/nodes': {
    metadata: { name: 'worker-1' },
    spec: { podCIDR: '10.244.0.0/24', taints: [{ key: 'node.svc.io/not-ready', effect: 'NoSchedule', timeAdded: ts }] },
    status: {
      capacity: { cpu: '2', memory: '4Gi' },
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: ts, lastTransitionTime: ts, reason: 'KubeletReady', message: 'ok' }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { kubeletVersion: 'v1.34.0', operatingSystem: 'linux', architecture: 'amd64' },
    },
  },
  '/pods': {
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }], resources: { requests: { cpu: 0.5 } } }],
      volumes: [{ name: 'tmp' }],
    },
  },
  '/configmaps': { metadata: { name: 'cfg', namespace: 'default' }, data: { a: '1' }, binaryData: { b: b64('x') } },
  '/secrets': { metadata: { name: 's', namespace: 'default' }, stringData: { password: 'p' } },
  '/serviceaccounts': { metadata: { name: 'default', namespace: 'default' } },
  '/services': { metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ port: 80 }], selector: { app: 'web' } } },
  '/endpoints': { metadata: { name: 'web', namespace: 'default' }, subsets: [{ addresses: [{ ip: '10.1.0.5' }], ports: [{ port: 80 }] }] },
  '/events': {
    metadata: { name: 'web.1', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
    reason: 'Started',
    message: 'Started container',
    type: 'Normal',
    firstTimestamp: ts,
    lastTimestamp: ts,
    count: 1,
  },
  '/persistentvolumes': { metadata: { name: 'pv1' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' } } },
  '/persistentvolumeclaims': { metadata: { name: 'c', namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  'coordination.svc.io/leases': { metadata: { name: 'worker-1', namespace: 'svc-node-lease' }, spec: { holderIdentity: 'worker-1', leaseDurationSeconds: 40, renewTime: '2025-03-01T12:00:00.000000Z' } },
  'events.svc.io/events': {
    metadata: { name: 'web.2', namespace: 'default' },
    eventTime: '2025-03-01T12:00:00.000000Z',
    reportingController: 'svc.io/scheduler',
    reportingInstance: 's-1',
    action: 'Binding',
    reason: 'Scheduled',
    regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
    type: 'Normal',
  },
  '/resourcequotas': {
    metadata: { name: 'q', namespace: 'default' },
    spec: { hard: { pods: '10', 'requests.cpu': '2', 'limits.memory': '4Gi', 'count/deployments.apps': '3', 'requests.example.com/gpu': '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] } },
  },
  '/limitranges': {
    metadata: { name: 'l', namespace: 'default' },
    spec: { limits: [{ type: 'Container', max: { cpu: '2' }, min: { cpu: '100m' }, defaultRequest: { cpu: '200m' }, maxLimitRequestRatio: { cpu: '4' } }, { type: 'PersistentVolumeClaim', max: { storage: '10Gi' } }] },
  },
  'policy/poddisruptionbudgets': { metadata: { name: 'p', namespace: 'default' }, spec: { maxUnavailable: 1, selector: {} } },
  'apps/deployments': {
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } } },
  },
  'apps/replicasets': {
    metadata: { name: 'web-5d8c9f', namespace: 'default' },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } } },
  },
  // The store assigns the uid before defaulting, which generates the Job's selector from it.
  'batch/jobs': {
    metadata: { name: 'pi', namespace: 'default', uid: '6b8e2c1a-0000-4000-8000-000000000001' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl', command: ['perl', '-e', '1'] }] } } },
  },
  'batch/cronjobs': {
    metadata: { name: 'hello', namespace: 'default' },
    spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'c', image: 'busybox' }] } } } } },
  },
};

const CSR = `-----BEGIN CERTIFICATE REQUEST-----
MIGeMFICAQAwHzEOMAwGA1UEAwwFYWxpY2UxDTALBgNVBAoMBGRldnMwKjAFBgMr
ZXADIQAnVt5Cnk61SZL0weW6mKQWzV/bFmGXz+m0Xi46xDWkcaAAMAUGAytlcANB
ALuvkFerkE8Oen4sWV9YuX5xFFYEMrkrplcgah1FO0KAiow5hlNltO6X3Ce2LWld
xQCb1iJaYsXRpSVxcjjTCwA=
-----END CERTIFICATE REQUEST-----
`;
samples['certificates.svc.io/certificatesigningrequests'] = {
  metadata: { name: 'csr-1' },
  spec: { request: b64(CSR), signerName: 'svc.io/kube-apiserver-client', usages: ['client auth'] },
};

samples['rbac.authorization.svc.io/roles'] = { metadata: { name: 'pod-reader', namespace: 'default' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] };
samples['rbac.authorization.svc.io/clusterroles'] = { metadata: { name: 'system:agg' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }], aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] } };
samples['rbac.authorization.svc.io/rolebindings'] = { metadata: { name: 'rb', namespace: 'default' }, roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: 'pod-reader' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: 'alice' }, { kind: 'ServiceAccount', name: 'default' }] };
samples['rbac.authorization.svc.io/clusterrolebindings'] = { metadata: { name: 'crb' }, roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.svc.io', name: 'devs' }] };
const appTemplate = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx', volumeMounts: [{ name: 'www', mountPath: '/www' }] }] } };
const hookBase = { clientConfig: { url: 'https://hooks.example.com/admit', caBundle: 'LS0t' }, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status'] }], sideEffects: 'None', admissionReviewVersions: ['v1'] };
samples['admissionregistration.svc.io/mutatingwebhookconfigurations'] = { metadata: { name: 'labels' }, webhooks: [{ name: 'labels.hooks.example.com', ...hookBase, reinvocationPolicy: 'IfNeeded', matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }] }] };
samples['admissionregistration.svc.io/validatingwebhookconfigurations'] = { metadata: { name: 'policy' }, webhooks: [{ name: 'policy.hooks.example.com', ...hookBase, clientConfig: { service: { namespace: 'hooks', name: 'policy', path: '/validate' } } }] };
samples['admissionregistration.svc.io/validatingadmissionpolicies'] = {
  metadata: { name: 'replicas' },
  spec: {
    matchConstraints: { resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }] },
    variables: [{ name: 'replicas', expression: 'object.spec.replicas' }],
    validations: [{ expression: 'variables.replicas <= 5', messageExpression: "'too many: ' + string(variables.replicas)", reason: 'Invalid' }],
    auditAnnotations: [{ key: 'replicas', valueExpression: 'string(object.spec.replicas)' }],
  },
};
samples['admissionregistration.svc.io/validatingadmissionpolicybindings'] = { metadata: { name: 'replicas' }, spec: { policyName: 'replicas', validationActions: ['Deny', 'Audit'], paramRef: { name: 'limits', namespace: 'default' } } };
samples['admissionregistration.svc.io/mutatingadmissionpolicies'] = {
  metadata: { name: 'team-label' },
  spec: {
    matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] },
    mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"team": "a"}}}' } }],
    reinvocationPolicy: 'Never',
  },
};
samples['admissionregistration.svc.io/mutatingadmissionpolicybindings'] = { metadata: { name: 'team-label' }, spec: { policyName: 'team-label' } };
samples['apps/statefulsets'] = {
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    serviceName: 'web',
    template: appTemplate,
    volumeClaimTemplates: [{ metadata: { name: 'www' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
  },
};
samples['apps/daemonsets'] = { metadata: { name: 'agent', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { ...appTemplate, spec: { containers: [{ name: 'app', image: 'nginx' }] } } } };
samples['apps/controllerrevisions'] = { metadata: { name: 'web-5d4f', namespace: 'default' }, data: { spec: { template: { $patch: 'replace' } } }, revision: 1 };
samples['authorization.svc.io/selfsubjectaccessreviews'] = { metadata: { name: 'r' }, spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } };
samples['authorization.svc.io/selfsubjectrulesreviews'] = { metadata: { name: 'r' }, spec: { namespace: 'default' } };
samples['authorization.svc.io/subjectaccessreviews'] = { metadata: { name: 'r' }, spec: { user: 'alice', nonResourceAttributes: { path: '/healthz', verb: 'get' } } };
samples['scheduling.svc.io/priorityclasses'] = { metadata: { name: 'high' }, value: 1000, description: 'batch jobs that may preempt' };
samples['node.svc.io/runtimeclasses'] = {
  metadata: { name: 'gvisor' },
  handler: 'runsc',
  overhead: { podFixed: { cpu: '250m', memory: '64Mi' } },
  scheduling: { nodeSelector: { 'runtime/gvisor': 'yes' }, tolerations: [{ key: 'sandboxed', operator: 'Exists', effect: 'NoSchedule' }] },
};
samples['storage.svc.io/storageclasses'] = { metadata: { name: 'local-path', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'svc.io/local-path', volumeBindingMode: 'WaitForFirstConsumer', allowedTopologies: [{ matchLabelExpressions: [{ key: 'svc.io/hostname', values: ['n1'] }] }] };
samples['storage.svc.io/csidrivers'] = { metadata: { name: 'csi.example.com' }, spec: { podInfoOnMount: true, tokenRequests: [{ audience: 'vault', expirationSeconds: 3600 }] } };
samples['storage.svc.io/csinodes'] = { metadata: { name: 'worker-1' }, spec: { drivers: [{ name: 'csi.example.com', nodeID: 'worker-1', topologyKeys: ['topology.svc.io/zone'], allocatable: { count: 8 } }] } };
samples['storage.svc.io/volumeattachments'] = { metadata: { name: 'csi-1' }, spec: { attacher: 'csi.example.com', source: { persistentVolumeName: 'pv1' }, nodeName: 'worker-1' }, status: { attached: true, attachmentMetadata: { dev: '/dev/sdb' } } };
samples['metrics.svc.io/nodes'] = { metadata: { name: 'n1' }, timestamp: '2025-03-01T12:00:00Z', window: '15s', usage: { cpu: '250m', memory: '64Mi' } };
samples['metrics.svc.io/pods'] = { metadata: { name: 'p', namespace: 'default' }, timestamp: '2025-03-01T12:00:00Z', window: '15s', containers: [{ name: 'app', usage: { cpu: '5m', memory: '4Mi' } }] };
samples['autoscaling/horizontalpodautoscalers'] = {
  metadata: { name: 'web', namespace: 'default' },
  spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] },
};
samples['authorization.svc.io/localsubjectaccessreviews'] = { metadata: { name: 'r', namespace: 'default' }, spec: { user: 'alice', resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' } } };
samples['apiregistration.svc.io/apiservices'] = { metadata: { name: 'v1alpha1.wardle.example.com' }, spec: { group: 'wardle.example.com', version: 'v1alpha1', service: { namespace: 'wardle', name: 'api' }, insecureSkipTLSVerify: true, groupPriorityMinimum: 1000, versionPriority: 15 } };
samples['apiextensions.svc.io/customresourcedefinitions'] = {
  metadata: { name: 'widgets.example.com' },
  spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'widgets', kind: 'Widget' }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }] },
};

samples['discovery.svc.io/endpointslices'] = {
  metadata: { name: 'web-abc12', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.244.0.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'worker-1', zone: 'a', targetRef: { kind: 'Pod', namespace: 'default', name: 'web-0' } }],
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
};

samples['networking.svc.io/networkpolicies'] = {
  metadata: { name: 'deny-all', namespace: 'default' },
  spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], ports: [{ port: 80, endPort: 90 }] }] },
};

samples['networking.svc.io/ingressclasses'] = { metadata: { name: 'nginx' }, spec: { controller: 'example.com/ingress-nginx', parameters: { kind: 'ConfigMap', name: 'cfg', scope: 'Namespace', namespace: 'ingress' } } };
samples['networking.svc.io/ingresses'] = { metadata: { name: 'web', namespace: 'default' }, spec: { rules: [{ host: 'foo.com', http: { paths: [{ path: '/bar', pathType: 'Exact', backend: { service: { name: 'svc1', port: { number: 8080 } } } }] } }], tls: [{ hosts: ['foo.com'], secretName: 'my-cert' }] } };

test('every built-in type has a sample that defaults, validates and fits its schema', (t) => {
  for (const type of builtinTypes) {
    const key = `${type.group}/${type.resource}`;
    const sample = samples[key];
    if (!sample) {
      t.fail(`no sample for ${key}`);
      continue;
    }
    const o: KObject = { apiVersion: type.group ? `${type.group}/${type.version}` : type.version, kind: type.kind, ...structuredClone(sample) };
    if (type.hasStatus && !type.keepStatusOnCreate) delete o.status;
    type.defaults?.(o);
    const once = structuredClone(o);
    type.defaults?.(o);
    t.deepEqual(o, once, `${key}: defaults are idempotent`);
    t.deepEqual(validateAgainstSchema(o, type.schema), [], `${key}: schema`);
    t.deepEqual(validateObjectMeta(o.metadata, { namespaced: type.namespaced, nameRule: nameRuleFor(type) }), [], `${key}: metadata`);
    t.deepEqual(type.validate?.(o) ?? [], [], `${key}: kind rules`);
    t.deepEqual(type.validate?.(o, structuredClone(o)) ?? [], [], `${key}: kind rules on a no-op update`);
    t.deepEqual(type.validateUpdate?.(structuredClone(o), structuredClone(o)) ?? [], [], `${key}: no-op update`);
    for (const col of type.tableColumns ?? []) t.notThrows(() => col.cell(o), `${key}: ${col.name}`);
    for (const [field, read] of Object.entries(type.fieldSelectors ?? {})) t.is(typeof read(o), 'string', `${key}: ${field}`);
  }
});

function* walk(s: Schema, path: string): Generator<[string, Schema]> {
  yield [path, s];
  if (s.type === 'object') for (const [k, v] of Object.entries(s.properties)) yield* walk(v, `${path}.${k}`);
  if (s.type === 'map') yield* walk(s.values, `${path}[*]`);
  if (s.type === 'array') yield* walk(s.items, `${path}[]`);
}

test('schemas share ObjectMeta and every map list names its keys', (t) => {
  for (const type of builtinTypes) {
    // The same ObjectMeta, under the field's own description (a described() copy shares its properties).
    const meta = type.schema.properties.metadata;
    t.is(meta.type === 'object' ? meta.properties : undefined, objectMetaSchema.properties, type.resource);
    for (const [path, s] of walk(type.schema, type.kind)) {
      if (s.type === 'array' && s.listType === 'map') t.true((s.mapKeys ?? []).length > 0, path);
    }
  }
  const meta = objectMetaSchema.properties;
  t.deepEqual([(meta.finalizers as any).listType, (meta.ownerReferences as any).mapKeys, (meta.managedFields as any).listType], ['set', ['uid'], 'atomic']);
  t.is((meta.managedFields as any).items.properties.fieldsV1.type, 'any');
});

test('built-in types are unique and carry the expected scope and status flags', (t) => {
  const keys = builtinTypes.map((x) => `${x.group}/${x.version}/${x.resource}`);
  t.is(new Set(keys).size, keys.length);
  const withStatus = builtinTypes.filter((x) => x.hasStatus).map((x) => x.resource).sort();
  t.deepEqual(withStatus, ['apiservices', 'certificatesigningrequests', 'cronjobs', 'customresourcedefinitions', 'daemonsets', 'deployments', 'horizontalpodautoscalers', 'horizontalpodautoscalers', 'ingresses', 'jobs', 'namespaces', 'nodes', 'persistentvolumeclaims', 'persistentvolumes', 'poddisruptionbudgets', 'pods', 'replicasets', 'resourcequotas', 'services', 'statefulsets', 'validatingadmissionpolicies', 'volumeattachments']);
  const clusterScoped = builtinTypes.filter((x) => !x.namespaced).map((x) => x.resource).sort();
  t.deepEqual(clusterScoped, ['apiservices', 'certificatesigningrequests', 'clusterrolebindings', 'clusterroles', 'csidrivers', 'csinodes', 'customresourcedefinitions', 'ingressclasses', 'mutatingadmissionpolicies', 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings', 'mutatingadmissionpolicybindings', 'mutatingwebhookconfigurations', 'namespaces', 'nodes', 'nodes', 'persistentvolumes', 'priorityclasses', 'runtimeclasses', 'selfsubjectaccessreviews', 'selfsubjectrulesreviews', 'storageclasses', 'subjectaccessreviews', 'subjectaccessreviews', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings', 'validatingwebhookconfigurations', 'volumeattachments']);
});

test('makeBuiltinTypes wires the clock into Age columns', (t) => {
  const types = makeBuiltinTypes(() => Date.parse('2025-03-01T12:00:00Z'));
  const ns = types.find((x) => x.resource === 'namespaces')!;
  const age = ns.tableColumns!.find((c) => c.name === 'Age')!;
  t.is(age.cell({ metadata: { creationTimestamp: '2025-03-01T09:00:00Z' } }), '3h');
});

test('registry: lookup, byKind, resources, duplicates', (t) => {
  const r = new ResourceRegistry();
  for (const x of builtinTypes) r.register(x);
  t.is(r.lookup('', 'v1', 'pods')?.kind, 'Pod');
  t.is(r.lookup('events.svc.io', 'v1', 'events')?.group, 'events.svc.io');
  t.is(r.lookup('', 'v1', 'events')?.group, '');
  t.is(r.lookup('', 'v2', 'pods'), undefined);
  t.is(r.byKind('coordination.svc.io', 'v1', 'Lease')?.resource, 'leases');
  t.is(r.resources('', 'v1').length, 13);
  t.is(r.all().length, builtinTypes.length);
  t.throws(() => r.register(builtinTypes[0]), { message: /registered twice/ });
});

test('registry: groups in upstream discovery order, versions by priority', (t) => {
  const r = new ResourceRegistry();
  for (const x of builtinTypes) r.register(x);
  const extra = (group: string, version: string, resource: string): ResourceType => ({ ...builtinTypes[0], group, version, resource, kind: `${resource}-${version}` });
  r.register(extra('coordination.svc.io', 'v1beta1', 'leases'));
  r.register(extra('coordination.svc.io', 'v1alpha2', 'leasecandidates'));
  r.register(extra('zeta.example.com', 'v1', 'things'));
  r.register(extra('apps', 'v1', 'widgets'));
  t.deepEqual(
    r.groups().map((g) => [g.name, g.versions.join(','), g.preferredVersion]),
    [
      ['', 'v1', 'v1'],
      ['apps', 'v1', 'v1'],
      ['events.svc.io', 'v1', 'v1'],
      ['authorization.svc.io', 'v1,v1beta1', 'v1'],
      ['autoscaling', 'v2,v1', 'v2'],
      ['batch', 'v1', 'v1'],
      ['certificates.svc.io', 'v1', 'v1'],
      ['networking.svc.io', 'v1', 'v1'],
      ['policy', 'v1', 'v1'],
      ['rbac.authorization.svc.io', 'v1', 'v1'],
      ['storage.svc.io', 'v1', 'v1'],
      ['admissionregistration.svc.io', 'v1,v1beta1,v1alpha1', 'v1'],
      ['apiextensions.svc.io', 'v1', 'v1'],
      ['scheduling.svc.io', 'v1', 'v1'],
      ['coordination.svc.io', 'v1,v1beta1,v1alpha2', 'v1'],
      ['node.svc.io', 'v1', 'v1'],
      ['discovery.svc.io', 'v1', 'v1'],
      ['apiregistration.svc.io', 'v1', 'v1'],
      ['metrics.svc.io', 'v1beta1', 'v1beta1'],
      ['zeta.example.com', 'v1', 'v1'],
    ],
  );
  t.deepEqual(['v1alpha1', 'foo', 'v2', 'v1beta2', 'v1', 'v10beta1', 'v1beta1'].sort(compareVersions), ['v2', 'v1', 'v10beta1', 'v1beta2', 'v1beta1', 'v1alpha1', 'foo']);
});

test('name rules per kind', (t) => {
  t.is(nameRuleFor({ group: '', resource: 'namespaces' }), 'label');
  t.is(nameRuleFor({ group: '', resource: 'services' }), 'dns1035');
  t.is(nameRuleFor({ group: '', resource: 'persistentvolumes' }), 'path-segment');
  t.is(nameRuleFor({ group: 'certificates.svc.io', resource: 'certificatesigningrequests' }), 'path-segment');
  t.is(nameRuleFor({ group: 'rbac.authorization.svc.io', resource: 'roles' }), 'path-segment');
  t.is(nameRuleFor({ group: '', resource: 'pods' }), 'subdomain');
});

test('regression: agent-reported statuses need only list keys (upstream never enforced OpenAPI required)', (t) => {
  const pods = builtinTypes.find((x) => x.resource === 'pods')!;
  const pod: KObject = {
    metadata: { name: 'p', namespace: 'default' },
    spec: { containers: [{ name: 'a', image: 'x' }] },
    status: { phase: 'Pending', containerStatuses: [{ name: 'a', state: { terminated: { reason: 'Error' } } }], conditions: [{ type: 'PodScheduled' }] },
  };
  t.deepEqual(validateAgainstSchema(pod, pods.schema), []);
  const nodes = builtinTypes.find((x) => x.resource === 'nodes')!;
  const node: KObject = { metadata: { name: 'n' }, status: { conditions: [{ type: 'Ready' }], addresses: [{ type: 'Hostname' }], daemonEndpoints: { kubeletEndpoint: {} } } };
  t.deepEqual(validateAgainstSchema(node, nodes.schema), []);
});
