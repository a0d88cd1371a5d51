import test from 'ava';
import { defaultPodTemplate, validatePodTemplate } from '../../../../../apiserver/registry/types/pod-template';

const tpl = () => ({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27', resources: { limits: { cpu: '1' } } }] } });

test('defaultPodTemplate applies the pod-spec defaults a template gets upstream, and not the admission ones', (t) => {
  const x: Record<string, unknown> = tpl();
  defaultPodTemplate(x);
  const spec = x.spec as Record<string, unknown>;
  t.like(spec, { dnsPolicy: 'ClusterFirst', restartPolicy: 'Always', terminationGracePeriodSeconds: 30, schedulerName: 'default-scheduler', securityContext: {} });
  t.false('serviceAccountName' in spec);
  t.false('priority' in spec);
  t.like((spec.containers as Array<Record<string, unknown>>)[0], { imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', resources: { limits: { cpu: '1' }, requests: { cpu: '1' } } });
  const again = structuredClone(x);
  defaultPodTemplate(again);
  t.deepEqual(again, x);
});

test('validatePodTemplate: selector must match the labels, restart policy by workload, no activeDeadlineSeconds for always-restarting workloads', (t) => {
  const ok = tpl();
  defaultPodTemplate(ok);
  t.deepEqual(validatePodTemplate(ok, 'spec.template', { selector: { matchLabels: { app: 'web' } }, restartPolicies: ['Always'] }), []);
  const causes = validatePodTemplate(ok, 'spec.template', { selector: { matchLabels: { app: 'db' } }, restartPolicies: ['OnFailure', 'Never'] });
  t.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [
      ['spec.template.metadata.labels', 'Invalid value: {"app":"web"}: `selector` does not match template `labels`'],
      ['spec.template.spec.restartPolicy', 'Unsupported value: "Always": supported values: "OnFailure", "Never"'],
    ],
  );
  const deadline = { ...ok, spec: { ...ok.spec, activeDeadlineSeconds: 5 } };
  t.deepEqual(validatePodTemplate(deadline, 'spec.template', { restartPolicies: ['Always'] }).map((c) => c.message), ['Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported']);
  t.deepEqual(validatePodTemplate(undefined, 'spec.template', { restartPolicies: ['Always'] }).map((c) => c.field), ['spec.template']);
});
