/**
 * DeclarativeValidation (spec 9.4, 6.2): the schema's rules compared with the hand-written
 * validation on create, update and status writes; mismatches counted; Takeover answering with the
 * schema's causes for the covered rules; a failing declarative path contained.
 */
import test from 'ava';
import { ApiError, type Cause } from '../../../../apiserver/api/errors';
import type { KObject } from '../../../../apiserver/api/types';
import { coveredByDeclarative, notSupported } from '../../../../apiserver/registry/field-errors';
import type { ResourceType } from '../../../../apiserver/registry/resource-type';
import { kindSchema, obj, strEnum } from '../../../../apiserver/registry/schema-builders';
import { objectMetaSchema } from '../../../../apiserver/registry/common-schemas';
import { SqliteStorage } from '../../../../apiserver/storage/sqlite';
import { mismatches, validateObject, type DeclarativeValidationOptions } from '../../../../apiserver/store/declarative-validation';
import { ObjectStore } from '../../../../apiserver/store/object-store';
import { WatchCache } from '../../../../apiserver/store/watch-cache';
import { admin, ctx } from './fixture';
import { serviceType } from '../../../../apiserver/registry/types/services';
import { makeDeploymentType } from '../../../../apiserver/registry/types/deployments';
import { cronJobType } from '../../../../apiserver/registry/types/cronjobs';
import { validateAgainstSchema } from '../../../../apiserver/validation/validate-schema';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MODES = ['Fast', 'Slow'];
const PHASES = ['Pending', 'Running', 'Gone'];

/**
 * A test kind whose schema and hand-written validation disagree on purpose: the schema allows
 * spec.mode Fast and Slow, the hand-written validation also allows Medium but refuses Slow (in its
 * own words, so the two answers are told apart); for status.phase the hand-written validation
 * refuses Gone, which the schema allows. Both hand-written rules are marked covered.
 */
function testKind(handwrittenCalls: { n: number }): ResourceType {
  const schema = kindSchema('svc.test.v1.Widget', objectMetaSchema, {
    spec: [2, obj('svc.test.v1.WidgetSpec', { mode: [1, strEnum(MODES)] })],
    status: [3, obj('svc.test.v1.WidgetStatus', { phase: [1, strEnum(PHASES)] })],
  });
  return {
    group: 'test.svc.io',
    version: 'v1',
    resource: 'widgets',
    singular: 'widget',
    kind: 'Widget',
    listKind: 'WidgetList',
    namespaced: true,
    schema,
    hasStatus: true,
    declarativeCoverage: ['spec.mode'],
    validate(o: KObject): Cause[] {
      handwrittenCalls.n++;
      const out: Cause[] = [];
      const mode = (o.spec as { mode?: string } | undefined)?.mode;
      if (mode !== undefined && !['Fast', 'Medium'].includes(mode)) out.push(coveredByDeclarative(notSupported('spec.mode', mode, ['Fast', 'Medium'])));
      const phase = (o.status as { phase?: string } | undefined)?.phase;
      if (phase === 'Gone') out.push(coveredByDeclarative(notSupported('status.phase', phase, ['Pending', 'Running'])));
      return out;
    },
  };
}

interface Reported {
  mismatches: string[];
  panics: string[];
}

async function withStore(
  gates: { enabled: boolean; takeover: boolean } | undefined,
  run: (s: ObjectStore, t: ResourceType, reported: Reported, calls: { n: number }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-dv-'));
  const storage = SqliteStorage.open(join(dir, 'state.db'), { synchronous: 'NORMAL' });
  const cache = new WatchCache(storage, { retainMs: 60_000, now: () => 0 });
  const ac = new AbortController();
  const running = cache.run(ac.signal);
  await cache.whenReady();
  const reported: Reported = { mismatches: [], panics: [] };
  const dv: DeclarativeValidationOptions | undefined = gates && {
    ...gates,
    report: { mismatch: (d) => reported.mismatches.push(d), panic: (d) => reported.panics.push(d) },
  };
  const store = new ObjectStore(storage, cache, { admit: async () => {} }, { now: () => new Date(), rvWaitMs: 2000, declarativeValidation: dv });
  const calls = { n: 0 };
  try {
    await run(store, testKind(calls), reported, calls);
  } finally {
    ac.abort();
    await running.catch(() => undefined);
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const widget = (name: string, mode: string): KObject => ({ apiVersion: 'test.svc.io/v1', kind: 'Widget', metadata: { name }, spec: { mode } });

async function refusal(p: Promise<unknown>): Promise<Cause[]> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  if (err.code !== 422) throw err;
  return err.details?.causes ?? [];
}

test('gate off: the schema answers as before, the hand-written validation does not run on what it refuses, nothing is compared', async (t) => {
  await withStore(undefined, async (s, k, reported, calls) => {
    const causes = await refusal(s.create(k, 'default', widget('w1', 'Medium'), admin));
    t.deepEqual(causes.map((c) => [c.field, c.reason]), [['spec.mode', 'FieldValueNotSupported']]);
    t.regex(causes[0].message, /supported values: "Fast", "Slow"/);
    t.is(calls.n, 0);
    // What the schema allows and the hand-written validation refuses is refused by the latter, uncompared.
    const slow = await refusal(s.create(k, 'default', widget('w2', 'Slow'), admin));
    t.regex(slow[0].message, /supported values: "Fast", "Medium"/);
    t.deepEqual(reported, { mismatches: [], panics: [] });
  });
});

test('gate on: agreeing validations count nothing; a valid object is created', async (t) => {
  await withStore({ enabled: true, takeover: false }, async (s, k, reported) => {
    const causes = await refusal(s.create(k, 'default', widget('w1', 'Bogus'), admin));
    t.deepEqual(causes.map((c) => [c.field, c.reason]), [['spec.mode', 'FieldValueNotSupported']]);
    await s.create(k, 'default', widget('w2', 'Fast'), admin);
    t.deepEqual(reported.mismatches, []);
  });
});

test('gate on: each divergence is one mismatch, named by kind, field and type without the value; the hand-written answer stands', async (t) => {
  await withStore({ enabled: true, takeover: false }, async (s, k, reported, calls) => {
    // The schema refuses Medium, which the hand-written validation allows: an extra declarative error.
    const medium = await refusal(s.create(k, 'default', widget('w1', 'Medium'), admin));
    t.deepEqual(medium.map((c) => c.field), ['spec.mode']);
    t.is(calls.n, 1, 'hand-written validation ran on the object the schema refused, to be compared');
    t.is(reported.mismatches.length, 1);
    t.regex(reported.mismatches[0], /^Widget: extra declarative error FieldValueNotSupported at spec\.mode/);
    t.notRegex(reported.mismatches[0], /Medium/);
    // The hand-written validation refuses Slow, which the schema allows: an unmatched hand-written error, still refused.
    const slow = await refusal(s.create(k, 'default', widget('w2', 'Slow'), admin));
    t.regex(slow[0].message, /supported values: "Fast", "Medium"/);
    t.is(reported.mismatches.length, 2);
    t.regex(reported.mismatches[1], /^Widget: unmatched hand-written error FieldValueNotSupported at spec\.mode/);
    t.notRegex(reported.mismatches[1], /Slow/);
  });
});

test('gate on: updates and status writes are compared too', async (t) => {
  await withStore({ enabled: true, takeover: false }, async (s, k, reported) => {
    await s.create(k, 'default', widget('w1', 'Fast'), admin);
    await refusal(s.update(k, 'default', 'w1', (cur) => ({ ...cur!, spec: { mode: 'Slow' } }), admin));
    t.is(reported.mismatches.length, 1);
    await refusal(s.update(k, 'default', 'w1', (cur) => ({ ...cur!, status: { phase: 'Gone' } }), ctx({ subresource: 'status' })));
    t.is(reported.mismatches.length, 2);
    t.regex(reported.mismatches[1], /unmatched hand-written error FieldValueNotSupported at status\.phase/);
  });
});

test('takeover: the schema answers for the covered rules; marked hand-written causes are dropped', async (t) => {
  await withStore({ enabled: true, takeover: true }, async (s, k, reported) => {
    // Slow: the schema allows it; the hand-written refusal is covered, so dropped: the object is created.
    const created = await s.create(k, 'default', widget('w1', 'Slow'), admin);
    t.deepEqual(created.spec, { mode: 'Slow' });
    // Bogus: both refuse; the answer is the schema's cause (its supported values), once.
    const bogus = await refusal(s.create(k, 'default', widget('w2', 'Bogus'), admin));
    t.deepEqual(bogus.map((c) => c.field), ['spec.mode']);
    t.regex(bogus[0].message, /supported values: "Fast", "Slow"/);
    t.is(reported.mismatches.length, 1, 'the Slow divergence is still counted');
    t.regex(reported.mismatches[0], /Consider disabling the DeclarativeValidationTakeover feature gate/);
  });
});

const input = (over: Partial<Parameters<typeof validateObject>[0]> = {}): Parameters<typeof validateObject>[0] => ({
  kind: 'Widget',
  schema: [],
  meta: [],
  declarative: () => [],
  handwritten: () => [],
  ...over,
});

test('a failing declarative path is counted as a panic and changes no answer, unless takeover: then an InternalError cause', (t) => {
  const panics: string[] = [];
  const report = { mismatch: () => t.fail('no comparison without a declarative result'), panic: (d: string) => panics.push(d) };
  const boom = () => {
    throw new Error('boom');
  };
  t.deepEqual(validateObject(input({ declarative: boom }), { enabled: true, takeover: false, report }), []);
  t.deepEqual(panics, ['declarative validation of Widget failed: boom']);
  const hw = notSupported('spec.mode', 'x', ['Fast']);
  t.deepEqual(validateObject(input({ declarative: boom, handwritten: () => [hw] }), { enabled: true, takeover: false, report }), [hw]);
  const taken = validateObject(input({ declarative: boom }), { enabled: true, takeover: true, report });
  t.deepEqual(taken.map((c) => c.reason), ['InternalError']);
  t.is(panics.length, 3);
});

test('structural schema errors stop everything before either validation, with every gate', (t) => {
  const typeError: Cause = { reason: 'FieldValueTypeInvalid', message: 'Invalid value: "string": spec.mode in body must be of type string: "number"', field: 'spec.mode' };
  const report = { mismatch: () => t.fail(), panic: () => t.fail() };
  for (const takeover of [false, true]) {
    const out = validateObject(input({ schema: [typeError], handwritten: () => t.fail(), declarative: () => t.fail() }), { enabled: true, takeover, report });
    t.deepEqual(out, [typeError]);
  }
});

test('a hand-written exception on an object the schema already refuses is no answer; where it always ran, it still throws', (t) => {
  const rule = notSupported('spec.mode', 'x', ['Fast']);
  const report = { mismatch: () => undefined, panic: () => t.fail() };
  const boom = () => {
    throw new TypeError('cannot read properties of undefined');
  };
  t.deepEqual(validateObject(input({ schema: [rule], declarative: () => [rule], handwritten: boom }), { enabled: true, takeover: false, report }), [rule]);
  t.deepEqual(validateObject(input({ schema: [rule], declarative: () => [rule], handwritten: boom }), { enabled: true, takeover: true, report }), [rule]);
  t.throws(() => validateObject(input({ handwritten: boom }), { enabled: true, takeover: false, report }), { instanceOf: TypeError });
});

test('mismatches: matched by field and type, exact hand-written duplicates once, only covered fields compared', (t) => {
  const hw = coveredByDeclarative(notSupported('spec.ports[0].protocol', 'X', ['TCP']));
  const dup = coveredByDeclarative(notSupported('spec.ports[0].protocol', 'X', ['TCP']));
  const d = notSupported('spec.ports[0].protocol', 'X', ['TCP', 'UDP']);
  t.deepEqual(mismatches('Service', [hw, dup], [d]), [], 'messages may differ; field and type match');
  t.is(mismatches('Service', [hw, dup], []).length, 1);
  const uncovered = notSupported('spec.other', 'y', ['z']);
  t.deepEqual(mismatches('Service', [], [uncovered]), [], 'a declarative error outside the covered fields is not compared');
  t.is(mismatches('Service', [], [d], ['spec.ports[*].protocol']).length, 1, 'list indices match the [*] pattern');
  t.is(mismatches('Service', [hw], [{ ...d, reason: 'FieldValueRequired' }]).length, 2, 'another type at the same field is both an unmatched and an extra error');
});

test('the built-in kinds that mark covered causes agree with their schemas on a bad value', (t) => {
  const cases: Array<[ResourceType, KObject, string]> = [
    [serviceType, { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'd' }, spec: { type: 'Bogus', ports: [{ port: 80 }] } }, 'spec.type'],
    [makeDeploymentType(), { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'd' }, spec: { strategy: { type: 'Bogus' } } }, 'spec.strategy.type'],
    [cronJobType, { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c', namespace: 'd' }, spec: { schedule: '* * * * *', concurrencyPolicy: 'Bogus', jobTemplate: {} } }, 'spec.concurrencyPolicy'],
  ];
  for (const [k, o, field] of cases) {
    const handwritten = k.validate!(o);
    const marked = handwritten.filter((c) => c.field === field);
    t.is(marked.length, 1, `${k.kind}: the hand-written validation refuses ${field}`);
    const declarative = validateAgainstSchema(o, k.schema).filter((c) => c.reason !== 'FieldValueTypeInvalid');
    t.true(declarative.some((c) => c.field === field), `${k.kind}: the schema refuses ${field}`);
    t.deepEqual(mismatches(k.kind, handwritten, declarative, k.declarativeCoverage), [], k.kind);
    t.deepEqual(k.declarativeCoverage, [field]);
  }
});
