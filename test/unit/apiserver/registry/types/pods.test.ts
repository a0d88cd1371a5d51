import test from 'ava';
import type { KObject } from '../../../../../apiserver/api/types';
import { imageTag, podQosClass } from '../../../../../apiserver/registry/types/pod-defaults';
import { makePodType } from '../../../../../apiserver/registry/types/pods';
import { ago, cells, fields, now } from './fixtures';

const podType = makePodType(now);

function pod(extra: Record<string, unknown> = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default' },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra },
  };
}

function defaulted(o: KObject): KObject {
  podType.defaults!(o);
  return o;
}

test('defaults follow upstream SetDefaults_Pod and the admission-set values', (t) => {
  const o = defaulted(
    pod({
      containers: [
        { name: 'a', image: 'nginx', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1000m', memory: '1024Mi' } } },
        { name: 'b', image: 'nginx:latest', livenessProbe: { httpGet: { port: 8080 } } },
        { name: 'c', image: 'registry.local:5000/app:v1' },
        { name: 'd', image: 'nginx@sha256:abcd' },
      ],
      volumes: [{ name: 'scratch' }, { name: 's', secret: { secretName: 'x' } }],
    }),
  );
  const spec = o.spec as Record<string, any>;
  t.is(spec.restartPolicy, 'Always');
  t.is(spec.dnsPolicy, 'ClusterFirst');
  t.is(spec.schedulerName, 'default-scheduler');
  t.is(spec.terminationGracePeriodSeconds, 30);
  t.is(spec.serviceAccountName, 'default');
  t.is(spec.serviceAccount, 'default');
  t.is(spec.enableServiceLinks, true);
  t.is(spec.priority, 0);
  t.is(spec.preemptionPolicy, 'PreemptLowerPriority');
  t.deepEqual(spec.securityContext, {});
  t.deepEqual(
    spec.containers.map((c: any) => c.imagePullPolicy),
    ['Always', 'Always', 'IfNotPresent', 'IfNotPresent'],
  );
  t.is(spec.containers[0].terminationMessagePath, '/dev/termination-log');
  t.is(spec.containers[0].terminationMessagePolicy, 'File');
  t.deepEqual(spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
  // Requests default to limits, and quantities are canonical.
  t.deepEqual(spec.containers[0].resources, { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } });
  t.deepEqual(spec.containers[1].resources, {});
  t.deepEqual(spec.containers[1].livenessProbe, {
    httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  });
  t.deepEqual(spec.volumes, [{ name: 'scratch', emptyDir: {} }, { name: 's', secret: { secretName: 'x', defaultMode: 420 } }]);
  t.deepEqual(o.status, { phase: 'Pending', qosClass: 'Burstable' });
  // Idempotent.
  const again = structuredClone(o);
  podType.defaults!(again);
  t.deepEqual(again, o);
});

test('defaults keep explicit values and the deprecated serviceAccount alias', (t) => {
  const o = defaulted(pod({ serviceAccount: 'builder', restartPolicy: 'Never', terminationGracePeriodSeconds: 0, enableServiceLinks: false }));
  const spec = o.spec as Record<string, unknown>;
  t.is(spec.serviceAccountName, 'builder');
  t.is(spec.restartPolicy, 'Never');
  t.is(spec.terminationGracePeriodSeconds, 0);
  t.is(spec.enableServiceLinks, false);
});

test('a mirror pod gets no service account (upstream: the ServiceAccount plugin skips mirror pods); one it names is kept for admission to refuse', (t) => {
  const mirror = (extra: Record<string, unknown> = {}): KObject => ({ ...pod(extra), metadata: { name: 'web', namespace: 'default', annotations: { 'svc.io/config.mirror': '' } } });
  const spec = defaulted(mirror()).spec as Record<string, unknown>;
  t.false('serviceAccountName' in spec);
  t.false('serviceAccount' in spec);
  t.is((defaulted(mirror({ serviceAccount: 'builder' })).spec as Record<string, unknown>).serviceAccountName, 'builder');
  t.is((defaulted(mirror({ serviceAccountName: 'default' })).spec as Record<string, unknown>).serviceAccountName, 'default');
});

test('host networking copies container ports to host ports', (t) => {
  const o = defaulted(pod({ hostNetwork: true, containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 9100 }] }] }));
  t.deepEqual((o.spec as any).containers[0].ports, [{ containerPort: 9100, protocol: 'TCP', hostPort: 9100 }]);
});

test('imageTag and QoS class', (t) => {
  t.is(imageTag('nginx'), 'latest');
  t.is(imageTag('nginx:1.2'), '1.2');
  t.is(imageTag('host:5000/nginx'), 'latest');
  t.is(imageTag('nginx@sha256:00'), '');
  t.is(podQosClass({ containers: [{ name: 'a' }] }), 'BestEffort');
  t.is(podQosClass({ containers: [{ resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } } }] }), 'Guaranteed');
  t.is(podQosClass({ containers: [{ resources: { requests: { cpu: '100m' } } }] }), 'Burstable');
});

test('a defaulted valid pod passes validation', (t) => {
  const o = defaulted(
    pod({
      containers: [
        {
          name: 'app',
          image: 'nginx',
          ports: [{ name: 'http', containerPort: 80 }],
          env: [{ name: 'A', value: '1' }, { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
      tolerations: [{ key: 'node.svc.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    }),
  );
  t.deepEqual(podType.validate!(o), []);
});

test('typical invalid pods report upstream field paths', (t) => {
  t.deepEqual(fields(podType.validate!(defaulted(pod({ containers: [] })))), ['spec.containers']);

  const dup = defaulted(pod({ containers: [{ name: 'a', image: 'x' }, { name: 'a', image: 'y' }] }));
  const dupCauses = podType.validate!(dup);
  t.deepEqual(dupCauses.map((c) => [c.field, c.message]), [['spec.containers[1].name', 'Duplicate value: "a"']]);

  const noImage = defaulted(pod({ containers: [{ name: 'a' }] }));
  t.deepEqual(podType.validate!(noImage).map((c) => [c.field, c.message]), [['spec.containers[0].image', 'Required value']]);

  const badName = defaulted(pod({ containers: [{ name: 'My_App', image: 'x' }] }));
  t.deepEqual(fields(podType.validate!(badName)), ['spec.containers[0].name']);

  const badRestart = defaulted(pod({ restartPolicy: 'Sometimes' }));
  t.deepEqual(podType.validate!(badRestart).map((c) => [c.field, c.message]), [
    ['spec.restartPolicy', 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
  ]);

  const badMount = defaulted(pod({ containers: [{ name: 'a', image: 'x', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }] }));
  t.deepEqual(badMount.spec && podType.validate!(badMount).map((c) => [c.field, c.message]), [['spec.containers[0].volumeMounts[0].name', 'Not found: "nope"']]);

  const badPort = defaulted(pod({ containers: [{ name: 'a', image: 'x', ports: [{ containerPort: 70000 }] }] }));
  t.deepEqual(podType.validate!(badPort).map((c) => [c.field, c.message]), [
    ['spec.containers[0].ports[0].containerPort', 'Invalid value: 70000: must be between 1 and 65535, inclusive'],
  ]);

  const twoSources = defaulted(pod({ volumes: [{ name: 'v', emptyDir: {}, hostPath: { path: '/' } }] }));
  t.deepEqual(fields(podType.validate!(twoSources)), ['spec.volumes[0].hostPath']);

  const tol = defaulted(pod({ tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }, { operator: 'Equal' }] }));
  t.deepEqual(fields(podType.validate!(tol)), ['spec.tolerations[0].operator', 'spec.tolerations[1].operator']);

  const reqOverLimit = defaulted(pod({ containers: [{ name: 'a', image: 'x', resources: { limits: { cpu: '1' }, requests: { cpu: '2' } } }] }));
  t.deepEqual(podType.validate!(reqOverLimit).map((c) => [c.field, c.message]), [
    ['spec.containers[0].resources.requests[cpu]', 'Invalid value: "2": must be less than or equal to cpu limit of 1'],
  ]);
});

test('create-only rules: no ephemeral containers, no nodeName while gated', (t) => {
  const o = defaulted(pod({ ephemeralContainers: [{ name: 'dbg', image: 'busybox' }], nodeName: 'n1', schedulingGates: [{ name: 'wait' }] }));
  t.deepEqual(fields(podType.validate!(o)), ['spec.ephemeralContainers', 'spec.nodeName']);
  t.deepEqual(podType.validate!(o, o), []);
});

test('pod updates may change images, lower activeDeadlineSeconds and add tolerations', (t) => {
  const old = defaulted(pod({ activeDeadlineSeconds: 100, tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }] }));
  const next = structuredClone(old);
  const spec = next.spec as any;
  spec.containers[0].image = 'nginx:1.28';
  spec.activeDeadlineSeconds = 50;
  spec.tolerations[0].tolerationSeconds = 20;
  spec.tolerations.push({ key: 'b', operator: 'Exists' });
  t.deepEqual(podType.validateUpdate!(next, old), []);
});

test('other pod spec changes are forbidden with the upstream message', (t) => {
  const old = defaulted(pod());
  const next = structuredClone(old);
  (next.spec as any).nodeName = 'n2';
  (next.spec as any).containers[0].args = ['-v'];
  const [c] = podType.validateUpdate!(next, old);
  t.is(c.field, 'spec');
  t.is(c.reason, 'FieldValueForbidden');
  t.true(
    c.message.startsWith(
      'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    ),
  );
  t.true(c.message.includes('spec.nodeName'));
  t.true(c.message.includes('spec.containers[0].args'));
});

test('pod update rules for containers, deadlines and tolerations', (t) => {
  const old = defaulted(pod({ activeDeadlineSeconds: 100, tolerations: [{ key: 'a', operator: 'Exists' }] }));
  const more = structuredClone(old);
  (more.spec as any).containers.push({ name: 'b', image: 'x' });
  t.deepEqual(podType.validateUpdate!(more, old).map((c) => [c.field, c.message]), [['spec.containers', 'Forbidden: pod updates may not add or remove containers']]);

  const raised = structuredClone(old);
  (raised.spec as any).activeDeadlineSeconds = 200;
  t.deepEqual(podType.validateUpdate!(raised, old).map((c) => c.message), ['Invalid value: 200: must be less than or equal to previous value']);

  const removedTol = structuredClone(old);
  (removedTol.spec as any).tolerations = [];
  t.deepEqual(podType.validateUpdate!(removedTol, old).map((c) => c.message), ['Forbidden: existing toleration can not be modified except its tolerationSeconds']);
});

test('pods/ephemeralcontainers may only add ephemeral containers; the main resource may not change them', (t) => {
  const old = defaulted(pod());
  const added = structuredClone(old);
  (added.spec as any).ephemeralContainers = [{ name: 'debugger', image: 'busybox', targetContainerName: 'app' }];
  t.deepEqual(podType.validateUpdate!(added, old, 'ephemeralcontainers'), []);
  // Through the main resource the same change is an ordinary forbidden spec change.
  t.is(podType.validateUpdate!(added, old)[0]?.reason, 'FieldValueForbidden');

  const changed = structuredClone(added);
  (changed.spec as any).ephemeralContainers[0].image = 'other';
  t.deepEqual(podType.validateUpdate!(changed, added, 'ephemeralcontainers').map((c) => [c.field, c.message]), [
    ['spec.ephemeralContainers', 'Forbidden: existing ephemeral containers "debugger" may not be changed'],
  ]);
  const removed = structuredClone(added);
  (removed.spec as any).ephemeralContainers = [];
  t.deepEqual(podType.validateUpdate!(removed, added, 'ephemeralcontainers').map((c) => c.message), ['Forbidden: existing ephemeral containers "debugger" may not be removed']);
  const another = structuredClone(added);
  (another.spec as any).ephemeralContainers.push({ name: 'second', image: 'busybox' });
  t.deepEqual(podType.validateUpdate!(another, added, 'ephemeralcontainers'), []);
  // Other spec fields still may not change through the sub-resource.
  const sneaky = structuredClone(another);
  (sneaky.spec as any).containers[0].args = ['-v'];
  t.is(podType.validateUpdate!(sneaky, added, 'ephemeralcontainers')[0]?.field, 'spec');
});

function running(extra: Record<string, unknown> = {}): KObject {
  const o = defaulted(pod({ containers: [{ name: 'a', image: 'x' }, { name: 'b', image: 'y' }], nodeName: 'node-1' }));
  o.metadata.creationTimestamp = ago(5 * 60_000 + 10_000);
  o.status = {
    phase: 'Running',
    podIP: '10.0.0.5',
    podIPs: [{ ip: '10.0.0.5' }],
    containerStatuses: [
      { name: 'a', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: { startedAt: ago(60_000) } } },
      { name: 'b', ready: true, restartCount: 0, image: 'y', imageID: '', state: { running: { startedAt: ago(60_000) } } },
    ],
    ...extra,
  };
  return o;
}

test('table cells for a running pod, kubectl style', (t) => {
  t.deepEqual(podType.tableColumns!.map((c) => [c.name, c.priority]), [
    ['Ready', 0],
    ['Status', 0],
    ['Restarts', 0],
    ['Age', 0],
    ['IP', 1],
    ['Node', 1],
    ['Nominated Node', 1],
    ['Readiness Gates', 1],
  ]);
  t.deepEqual(cells(podType, running()), {
    Ready: '2/2',
    Status: 'Running',
    Restarts: '0',
    Age: '5m10s',
    IP: '10.0.0.5',
    Node: 'node-1',
    'Nominated Node': '<none>',
    'Readiness Gates': '<none>',
  });
});

test('table cells show waiting reasons, restarts with age, and Terminating', (t) => {
  const crash = running();
  (crash.status as any).containerStatuses[1] = {
    name: 'b',
    ready: false,
    restartCount: 3,
    image: 'y',
    imageID: '',
    state: { waiting: { reason: 'CrashLoopBackOff' } },
    lastState: { terminated: { exitCode: 1, finishedAt: ago(120_000) } },
  };
  const c = cells(podType, crash);
  t.is(c.Ready, '1/2');
  t.is(c.Status, 'CrashLoopBackOff');
  t.is(c.Restarts, '3 (2m ago)');

  const term = running();
  term.metadata.deletionTimestamp = ago(0);
  t.is(cells(podType, term).Status, 'Terminating');

  const exited = running();
  (exited.status as any).containerStatuses = [{ name: 'a', ready: false, restartCount: 0, image: 'x', imageID: '', state: { terminated: { exitCode: 137, signal: 9 } } }];
  t.is(cells(podType, exited).Status, 'Signal:9');

  const pending = defaulted(pod());
  t.deepEqual([cells(podType, pending).Ready, cells(podType, pending).Status, cells(podType, pending).IP], ['0/1', 'Pending', '<none>']);
});

test('table cells for init containers and readiness gates', (t) => {
  const o = defaulted(pod({ initContainers: [{ name: 'init', image: 'busybox' }], readinessGates: [{ conditionType: 'example.com/ready' }] }));
  o.status = {
    phase: 'Pending',
    initContainerStatuses: [{ name: 'init', ready: false, restartCount: 0, image: 'b', imageID: '', state: { running: {} } }],
    conditions: [{ type: 'example.com/ready', status: 'True' }],
  };
  const c = cells(podType, o);
  t.is(c.Status, 'Init:0/1');
  t.is(c['Readiness Gates'], '1/1');
  (o.status as any).initContainerStatuses[0].state = { waiting: { reason: 'ImagePullBackOff' } };
  t.is(cells(podType, o).Status, 'Init:ImagePullBackOff');
});

test('field selectors read upstream pod fields, unset as empty string', (t) => {
  const sel = podType.fieldSelectors!;
  const o = running();
  t.deepEqual(
    Object.fromEntries(Object.entries(sel).map(([k, f]) => [k, f(o)])),
    {
      'spec.nodeName': 'node-1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'default',
      'spec.hostNetwork': 'false',
      'status.phase': 'Running',
      'status.podIP': '10.0.0.5',
      'status.nominatedNodeName': '',
    },
  );
  t.is(sel['spec.nodeName'](pod()), '');
});

test('pod type metadata', (t) => {
  t.is(podType.kind, 'Pod');
  t.true(podType.hasStatus);
  t.deepEqual(podType.shortNames, ['po']);
  t.deepEqual(podType.categories, ['all']);
  const containers = (podType.schema.properties.spec as any).properties.containers;
  t.deepEqual([containers.listType, containers.mapKeys], ['map', ['name']]);
  const ports = containers.items.properties.ports;
  t.deepEqual(ports.mapKeys, ['containerPort', 'protocol']);
  t.deepEqual(containers.items.properties.volumeMounts.mapKeys, ['mountPath']);
  t.is((podType.schema.properties.spec as any).properties.tolerations.listType, 'atomic');
});

test('deletion strategy: the default grace period is the spec one for a running pod, 0 unscheduled or finished', (t) => {
  const grace = (o: KObject) => podType.deletion!.defaultGracePeriodSeconds!(o);
  t.is(grace(pod()), 0, 'unscheduled');
  t.is(grace(pod({ nodeName: 'n1' })), 30, 'upstream default');
  t.is(grace(pod({ nodeName: 'n1', terminationGracePeriodSeconds: 5 })), 5);
  t.is(grace({ ...pod({ nodeName: 'n1' }), status: { phase: 'Succeeded' } }), 0);
  t.is(grace({ ...pod({ nodeName: 'n1' }), status: { phase: 'Failed' } }), 0);
  t.is(grace({ ...pod({ nodeName: 'n1' }), status: { phase: 'Running' } }), 30);
  t.is(typeof podType.deletion!.holdsDeletion, 'undefined');
});
