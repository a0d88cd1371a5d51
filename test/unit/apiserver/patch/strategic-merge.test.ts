import test, { type ExecutionContext } from 'ava';
import { ApiError } from '../../../../apiserver/api/errors';
import type { ObjectSchema, Schema } from '../../../../apiserver/api/schema';
import { applyStrategicMergePatch } from '../../../../apiserver/patch/strategic-merge';

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const strMap: Schema = { type: 'map', values: str };

const port: ObjectSchema = { type: 'object', properties: { containerPort: int, protocol: str, name: str } };
const envVar: ObjectSchema = { type: 'object', properties: { name: str, value: str } };
const container: ObjectSchema = {
  type: 'object',
  properties: {
    name: str,
    image: str,
    args: { type: 'array', items: str },
    ports: { type: 'array', items: port, listType: 'map', mapKeys: ['containerPort', 'protocol'] },
    env: { type: 'array', items: envVar, listType: 'map', mapKeys: ['name'] },
    resources: { type: 'object', properties: { limits: { type: 'map', values: { type: 'quantity' } } } },
    securityContext: { type: 'object', atomic: true, properties: { runAsUser: int, privileged: { type: 'boolean' } } },
  },
  required: ['name'],
};
const volume: ObjectSchema = {
  type: 'object',
  properties: {
    name: str,
    emptyDir: { type: 'object', properties: { medium: str } },
    hostPath: { type: 'object', properties: { path: str } },
  },
};
const podSchema: ObjectSchema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: {
      type: 'object',
      properties: {
        name: str,
        labels: strMap,
        annotations: strMap,
        finalizers: { type: 'array', items: str, listType: 'set' },
      },
    },
    spec: {
      type: 'object',
      properties: {
        containers: { type: 'array', items: container, listType: 'map', mapKeys: ['name'] },
        volumes: { type: 'array', items: volume, listType: 'map', mapKeys: ['name'] },
        nodeSelector: strMap,
        tolerations: { type: 'array', items: { type: 'object', properties: { key: str, effect: str } } },
        strategy: {
          type: 'object',
          properties: { type: str, rollingUpdate: { type: 'object', properties: { maxSurge: { type: 'int-or-string' } } } },
        },
        extra: { type: 'any' },
      },
    },
  },
};

function pod(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', labels: { app: 'web', tier: 'fe' }, finalizers: ['a', 'b'] },
    spec: {
      containers: [
        { name: 'app', image: 'app:1', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }] },
        { name: 'sidecar', image: 'side:1' },
      ],
      nodeSelector: { zone: 'a', disk: 'ssd' },
      tolerations: [{ key: 'k1', effect: 'NoSchedule' }],
    },
  };
}

function smp(doc: unknown, patch: unknown, schema: Schema = podSchema): Record<string, any> {
  return applyStrategicMergePatch(doc, patch, schema) as Record<string, any>;
}

function apiError(t: ExecutionContext, fn: () => unknown): ApiError {
  const e = t.throws(fn, { instanceOf: ApiError });
  if (!e) throw new Error('expected an ApiError');
  return e;
}

test('containers merge by name: the named one is patched, others are kept', (t) => {
  const out = smp(pod(), { spec: { containers: [{ name: 'app', image: 'app:2' }] } });
  t.deepEqual(out.spec.containers, [
    { name: 'app', image: 'app:2', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }] },
    { name: 'sidecar', image: 'side:1' },
  ]);
  t.deepEqual(out.metadata, pod().metadata);
});

test('a new container is added; without $setElementOrder patch elements come first, as upstream', (t) => {
  const out = smp(pod(), { spec: { containers: [{ name: 'debug', image: 'busybox' }] } });
  t.deepEqual(
    out.spec.containers.map((c: { name: string }) => c.name),
    ['debug', 'app', 'sidecar'],
  );
});

test('patch order wins over live order for the elements it names', (t) => {
  const out = smp(pod(), { spec: { containers: [{ name: 'sidecar' }, { name: 'app' }] } });
  t.deepEqual(
    out.spec.containers.map((c: { name: string }) => c.name),
    ['sidecar', 'app'],
  );
  const later = smp(pod(), { spec: { containers: [{ name: 'sidecar', image: 'side:2' }] } });
  t.deepEqual(
    later.spec.containers.map((c: { image: string }) => c.image),
    ['app:1', 'side:2'],
  );
});

test('$patch: delete removes a list element by its merge key', (t) => {
  const out = smp(pod(), { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } });
  t.deepEqual(
    out.spec.containers.map((c: { name: string }) => c.name),
    ['app'],
  );
  // Deleting an absent element is not an error.
  t.is(smp(pod(), { spec: { containers: [{ name: 'nope', $patch: 'delete' }] } }).spec.containers.length, 2);
});

test('$patch: delete together with a merge in the same list', (t) => {
  const out = smp(pod(), {
    spec: { containers: [{ name: 'sidecar', $patch: 'delete' }, { name: 'app', image: 'app:3' }] },
  });
  t.deepEqual(
    out.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`),
    ['app=app:3'],
  );
});

test('$patch: replace on a list replaces it with the other elements', (t) => {
  const out = smp(pod(), { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'x' }] } });
  t.deepEqual(out.spec.containers, [{ name: 'only', image: 'x' }]);
});

test('$patch: replace on a map replaces it; $patch: delete empties it', (t) => {
  t.deepEqual(smp(pod(), { spec: { nodeSelector: { $patch: 'replace', zone: 'b' } } }).spec.nodeSelector, { zone: 'b' });
  t.deepEqual(smp(pod(), { spec: { nodeSelector: { $patch: 'delete' } } }).spec.nodeSelector, {});
  t.deepEqual(smp(pod(), { $patch: 'replace', kind: 'Pod' }), { kind: 'Pod' });
});

test('$patch: merge is the explicit default on maps and list elements', (t) => {
  const out = smp(pod(), {
    spec: { nodeSelector: { $patch: 'merge', zone: 'c' }, containers: [{ name: 'app', image: 'app:9', $patch: 'merge' }] },
  });
  t.deepEqual(out.spec.nodeSelector, { zone: 'c', disk: 'ssd' });
  t.is(out.spec.containers[0].image, 'app:9');
  t.is(out.spec.containers[0].$patch, undefined);
  t.deepEqual(out.spec.containers[0].env, [{ name: 'A', value: '1' }]);
});

test('unknown $patch values and missing merge keys are 400', (t) => {
  const bad: unknown[] = [
    { spec: { nodeSelector: { $patch: 'explode' } } },
    { spec: { containers: [{ name: 'app', $patch: 'explode' }] } },
    { spec: { containers: [{ image: 'no-name' }] } },
    { spec: { containers: [{ $patch: 'delete' }] } },
    { spec: { containers: ['not-a-map', { name: 'x' }] } },
    ['not', 'an', 'object'],
    null,
  ];
  for (const patch of bad) {
    const e = apiError(t, () => smp(pod(), patch));
    t.is(e.code, 400, JSON.stringify(patch));
  }
  t.regex(
    apiError(t, () => smp(pod(), { spec: { containers: [{ image: 'no-name' }] } })).message,
    /does not contain declared merge key: name/,
  );
  t.regex(apiError(t, () => smp(pod(), { spec: { nodeSelector: { $patch: 'explode' } } })).message, /unknown patch type: explode in map/);
});

test('nested keyed lists merge element-wise (ports by containerPort, env by name)', (t) => {
  const out = smp(pod(), {
    spec: {
      containers: [
        {
          name: 'app',
          ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443, protocol: 'TCP' }],
          env: [{ name: 'A', value: null }, { name: 'B', value: '2' }],
        },
      ],
    },
  });
  const app = out.spec.containers[0];
  t.deepEqual(app.ports, [
    { containerPort: 80, protocol: 'TCP', name: 'http' },
    { containerPort: 443, protocol: 'TCP' },
  ]);
  t.deepEqual(app.env, [{ name: 'A' }, { name: 'B', value: '2' }]);
});

test('$setElementOrder orders the merged list; live-only elements interleave by live position', (t) => {
  const doc = pod();
  (doc.spec as any).containers.push({ name: 'third', image: 't:1' });
  const out = smp(doc, {
    spec: {
      '$setElementOrder/containers': [{ name: 'third' }, { name: 'new' }, { name: 'app' }],
      containers: [{ name: 'new', image: 'n:1' }, { name: 'app', image: 'app:2' }],
    },
  });
  t.deepEqual(
    out.spec.containers.map((c: { name: string }) => c.name),
    ['sidecar', 'third', 'new', 'app'],
  );
  t.is(out.spec.containers[3].image, 'app:2');
  t.false(Object.keys(out.spec).some((k) => k.startsWith('$')));
});

test('$setElementOrder alone reorders the live list', (t) => {
  const out = smp(pod(), { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }] } });
  t.deepEqual(
    out.spec.containers.map((c: { name: string }) => c.name),
    ['sidecar', 'app'],
  );
});

test('kubectl-style patch removing a container: $setElementOrder plus $patch delete', (t) => {
  const out = smp(pod(), {
    spec: {
      '$setElementOrder/containers': [{ name: 'app' }],
      containers: [{ name: 'sidecar', $patch: 'delete' }],
    },
  });
  t.deepEqual(
    out.spec.containers.map((c: { name: string }) => c.name),
    ['app'],
  );
});

test('$setElementOrder on a primitive set, with $deleteFromPrimitiveList', (t) => {
  const out = smp(pod(), {
    metadata: {
      '$setElementOrder/finalizers': ['a', 'c'],
      '$deleteFromPrimitiveList/finalizers': ['b'],
      finalizers: ['c'],
    },
  });
  t.deepEqual(out.metadata.finalizers, ['a', 'c']);
  t.false(Object.keys(out.metadata).some((k) => k.startsWith('$')));
});

test('$setElementOrder inconsistent with the patch list, or not a list, is 400', (t) => {
  const e = apiError(t, () =>
    smp(pod(), {
      spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'other', image: 'x' }] },
    }),
  );
  t.is(e.code, 400);
  t.is(apiError(t, () => smp(pod(), { spec: { '$setElementOrder/containers': { name: 'app' } } })).code, 400);
  t.is(apiError(t, () => smp(pod(), { spec: { '$setElementOrder/containers': [{ image: 'x' }] } })).code, 400);
  t.is(
    apiError(t, () => smp(pod(), { spec: { '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }], containers: [{ name: 'b' }, { name: 'a' }] } }))
      .code,
    400,
  );
});

test('$retainKeys clears unlisted fields before merging', (t) => {
  const doc = { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%' } } } };
  const out = smp(doc, { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } });
  t.deepEqual(out.spec.strategy, { type: 'Recreate' });
  const kept = smp(doc, { spec: { strategy: { $retainKeys: ['type', 'rollingUpdate'], type: 'RollingUpdate' } } });
  t.deepEqual(kept.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%' } });
});

test('$retainKeys on a volume switches the volume source', (t) => {
  const doc = { spec: { volumes: [{ name: 'v', emptyDir: { medium: 'Memory' } }] } };
  const out = smp(doc, { spec: { volumes: [{ name: 'v', $retainKeys: ['name', 'hostPath'], hostPath: { path: '/data' } }] } });
  t.deepEqual(out.spec.volumes, [{ name: 'v', hostPath: { path: '/data' } }]);
});

test('$retainKeys errors: not a string list is 400, content outside the list is 422', (t) => {
  t.is(apiError(t, () => smp(pod(), { spec: { strategy: { $retainKeys: 'type' } } })).code, 400);
  const e = apiError(t, () => smp(pod(), { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: { maxSurge: 1 } } } }));
  t.is(e.code, 422);
  t.is(e.message, "patch content doesn't match retainKeys list");
});

test('primitive sets merge as an ordered union without duplicates', (t) => {
  const doc = { metadata: { finalizers: ['a', 'b'] } };
  t.deepEqual(smp(doc, { metadata: { finalizers: ['b', 'a'] } }).metadata.finalizers, ['b', 'a']);
  t.deepEqual(smp(doc, { metadata: { finalizers: ['a', 'c'] } }).metadata.finalizers, ['a', 'c', 'b']);
  t.deepEqual(smp(doc, { metadata: { finalizers: ['b', 'b'] } }).metadata.finalizers, ['a', 'b']);
  t.deepEqual(smp({ metadata: {} }, { metadata: { finalizers: ['x'] } }).metadata.finalizers, ['x']);
});

test('$deleteFromPrimitiveList removes values; non-list is 400', (t) => {
  const doc = { metadata: { finalizers: ['a', 'b', 'c', 'b'] } };
  t.deepEqual(smp(doc, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } }).metadata.finalizers, ['a', 'c']);
  t.deepEqual(smp({ metadata: {} }, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } }).metadata, {});
  t.is(apiError(t, () => smp(doc, { metadata: { '$deleteFromPrimitiveList/finalizers': 'b' } })).code, 400);
});

test('null deletes fields and map entries', (t) => {
  const out = smp(pod(), { metadata: { labels: { tier: null, new: 'x' } }, spec: { nodeSelector: null } });
  t.deepEqual(out.metadata.labels, { app: 'web', new: 'x' });
  t.false('nodeSelector' in out.spec);
  t.false('missing' in smp(pod(), { spec: { missing: null } }).spec);
});

test('atomic lists and atomic objects are replaced whole', (t) => {
  const out = smp(pod(), { spec: { tolerations: [{ key: 'k2' }] } });
  t.deepEqual(out.spec.tolerations, [{ key: 'k2' }]);
  const doc = pod();
  (doc.spec as any).containers[0].securityContext = { runAsUser: 1, privileged: true };
  const sc = smp(doc, { spec: { containers: [{ name: 'app', securityContext: { runAsUser: 2 } }] } });
  t.deepEqual(sc.spec.containers[0].securityContext, { runAsUser: 2 });
  const args = smp(
    { spec: { containers: [{ name: 'app', args: ['a', 'b'] }] } },
    { spec: { containers: [{ name: 'app', args: ['c'] }] } },
  );
  t.deepEqual(args.spec.containers[0].args, ['c']);
});

test('fields the schema does not describe merge as RFC 7386', (t) => {
  const doc = { spec: { extra: { a: { b: 1, c: 2 }, l: [1, 2] }, unknown: { x: 1, y: [1] } } };
  const out = smp(doc, { spec: { extra: { a: { b: null, d: 3 }, l: [3] }, unknown: { x: null, z: { w: null } } } });
  t.deepEqual(out.spec.extra, { a: { c: 2, d: 3 }, l: [3] });
  t.deepEqual(out.spec.unknown, { y: [1], z: {} });
});

test('a value of another type replaces the old one; nulls inside new values are dropped', (t) => {
  const out = smp(pod(), { spec: { nodeSelector: 'oops', newField: { a: null, b: 1 } } });
  t.is(out.spec.nodeSelector, 'oops');
  t.deepEqual(out.spec.newField, { b: 1 });
  const fresh = smp({}, { spec: { containers: [{ name: 'x', image: null, env: [{ name: 'E', $patch: 'delete' }, { name: 'F' }] }] } });
  t.deepEqual(fresh, { spec: { containers: [{ name: 'x', env: [{ name: 'F' }] }] } });
});

test('a listType map without keys is a server bug (500)', (t) => {
  const broken: Schema = { type: 'object', properties: { l: { type: 'array', items: { type: 'object', properties: {} }, listType: 'map' } } };
  t.is(apiError(t, () => smp({ l: [{ a: 1 }] }, { l: [{ a: 2 }] }, broken)).code, 500);
});

test('inputs are not mutated and the result does not alias them', (t) => {
  const doc = pod();
  const patch = {
    metadata: { labels: { app: null }, '$deleteFromPrimitiveList/finalizers': ['a'] },
    spec: {
      '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'app' }],
      containers: [{ name: 'app', image: 'app:2', env: [{ name: 'A', $patch: 'delete' }] }],
      strategy: { $retainKeys: ['type'], type: 'Recreate' },
      extra: { deep: { list: [1] } },
    },
  };
  const docCopy = structuredClone(doc);
  const patchCopy = structuredClone(patch);
  const out = smp(doc, patch);
  t.deepEqual(doc, docCopy);
  t.deepEqual(patch, patchCopy);
  out.spec.extra.deep.list.push(2);
  out.spec.containers[1].ports[0].containerPort = 1;
  t.deepEqual(doc, docCopy);
  t.deepEqual(patch, patchCopy);
  t.deepEqual(out.metadata.finalizers, ['b']);
  t.deepEqual(
    out.spec.containers.map((c: { name: string }) => c.name),
    ['sidecar', 'app'],
  );
  t.deepEqual(out.spec.containers[1].env, []);
});
