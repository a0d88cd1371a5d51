/**
 * The mutating phase's reinvocation (upstream's reinvoker): the chain runs the mutating plugins a
 * second time only when a webhook or policy changed the object, the built-in ones all again, the
 * others' IfNeeded members only when a later change concerns them; never a third time. The
 * "hook" plugins here are minimal users of ReinvokeTracker, as the webhook and policy plugins are.
 */
import test from 'ava';
import { AdmissionChain, type AdmissionAttributes, type AdmissionPlugin } from '../../../../apiserver/admission/admission';
import { ReinvokeTracker } from '../../../../apiserver/admission/reinvocation';
import { makeBuiltinTypes } from '../../../../apiserver/registry/builtin';

const configMaps = makeBuiltinTypes().find((t) => t.resource === 'configmaps')!;
const attrs = (): AdmissionAttributes => ({
  operation: 'CREATE',
  type: configMaps,
  namespace: 'ns',
  name: 'cm',
  subresource: '',
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', labels: {} } },
  user: { username: 'u', groups: [] },
  dryRun: false,
});
const labels = (a: AdmissionAttributes) => a.object!.metadata.labels!;

/** A built-in mutator: counts its runs; optionally sets a label (a built-in change never asks for a second pass). */
function builtin(runs: string[], set?: [string, string]): AdmissionPlugin {
  return {
    name: 'Builtin',
    mutate(a) {
      runs.push('builtin');
      if (set) labels(a)[set[0]] = set[1];
      return Promise.resolve();
    },
  };
}

/** A plugin of hooks: each (name, IfNeeded?, mutation) run as the webhook and policy plugins run theirs. */
function hooks(name: string, runs: string[], list: Array<[string, boolean, (l: Record<string, string>) => void]>): AdmissionPlugin {
  return {
    name,
    mutate(a) {
      const { ctx, tracker } = ReinvokeTracker.of(a, name);
      if (tracker.idleOnReinvoke(ctx)) return Promise.resolve();
      tracker.begin(ctx, a);
      for (const [key, ifNeeded, mutation] of list) {
        if (tracker.notDue(ctx, key)) continue;
        runs.push(key);
        const before = JSON.stringify(labels(a));
        mutation(labels(a));
        tracker.invoked(ctx, key, JSON.stringify(labels(a)) !== before, ifNeeded);
      }
      tracker.end(a);
      return Promise.resolve();
    },
  };
}

const copy = (from: string, to: string) => (l: Record<string, string>) => void (l[to] = l[from] ?? 'none');
const set = (k: string, v: string) => (l: Record<string, string>) => void (l[k] = v);

test('no change by a hook or policy: one pass, built-ins once', async (t) => {
  const runs: string[] = [];
  await new AdmissionChain([builtin(runs, ['b', '1']), hooks('H', runs, [['h', true, () => {}]])]).admit(attrs());
  t.deepEqual(runs, ['builtin', 'h']);
});

test('a change by a hook: the built-ins run again; an IfNeeded hook before it is called again, one without not', async (t) => {
  const runs: string[] = [];
  const a = attrs();
  await new AdmissionChain([builtin(runs), hooks('H', runs, [['copy', true, copy('x', 'y')], ['never', false, copy('x', 'z')], ['set', false, set('x', '1')]])]).admit(a);
  t.deepEqual(runs, ['builtin', 'copy', 'never', 'set', 'builtin', 'copy']);
  t.deepEqual(labels(a), { x: '1', y: '1', z: 'none' });
});

test('a change in a later plugin makes an earlier plugin\'s IfNeeded hooks due; a hook is never called for the first time on the second pass', async (t) => {
  const runs: string[] = [];
  const a = attrs();
  // P's IfNeeded hook copies x (unset the first time); Q's hook then sets x.
  await new AdmissionChain([hooks('P', runs, [['copy', true, copy('x', 'y')]]), hooks('Q', runs, [['set', false, set('x', '1')]])]).admit(a);
  t.deepEqual(runs, ['copy', 'set', 'copy']);
  t.is(labels(a).y, '1');
});

test('a built-in change on the second pass makes IfNeeded hooks due', async (t) => {
  const runs: string[] = [];
  let pass = 0;
  const counting: AdmissionPlugin = {
    name: 'Builtin',
    mutate(a) {
      pass++;
      if (pass === 2) labels(a).b = 'second';
      return Promise.resolve();
    },
  };
  // "mark" changes the object (so a second pass happens) and is IfNeeded; on the second pass only the built-in's change concerns it.
  const a = attrs();
  await new AdmissionChain([counting, hooks('H', runs, [['mark', true, (l) => void (l.seen = l.b ?? 'first')]])]).admit(a);
  t.deepEqual(runs, ['mark', 'mark']);
  t.is(labels(a).seen, 'second');
});

test('never a third pass, however the hooks keep changing the object', async (t) => {
  const runs: string[] = [];
  let n = 0;
  const a = attrs();
  await new AdmissionChain([builtin(runs), hooks('H', runs, [['a', true, (l) => void (l.n = String(n++))], ['b', true, (l) => void (l.m = String(n++))]])]).admit(a);
  t.deepEqual(runs, ['builtin', 'a', 'b', 'builtin', 'a', 'b']);
});
