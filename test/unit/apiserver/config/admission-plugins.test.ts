import test from 'ava';
import { ADMISSION_PLUGINS, selectAdmissionPlugins } from '../../../../apiserver/config/admission-plugins';
import { FlagError, parseFlags } from '../../../../apiserver/config/flags';

test('the default set, in upstream\'s order; enable and disable change it, never the order', (t) => {
  t.deepEqual(parseFlags([]).admissionPlugins, ['NamespaceLifecycle', 'LimitRanger', 'NodeRestriction', 'ServiceAccount', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'RuntimeClass', 'DefaultIngressClass', 'MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook', 'ResourceQuota']);
  t.deepEqual(parseFlags(['--disable-admission-plugins=LimitRanger,ResourceQuota']).admissionPlugins, ['NamespaceLifecycle', 'NodeRestriction', 'ServiceAccount', 'PodSecurity', 'Priority', 'DefaultTolerationSeconds', 'DefaultStorageClass', 'RuntimeClass', 'DefaultIngressClass', 'MutatingAdmissionPolicy', 'MutatingAdmissionWebhook', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionWebhook']);
  // Listed out of order: they still run in upstream's order, AlwaysDeny last.
  t.deepEqual(parseFlags(['--enable-admission-plugins=AlwaysDeny,AlwaysAdmit', '--disable-admission-plugins=NodeRestriction']).admissionPlugins, [
    'AlwaysAdmit',
    'NamespaceLifecycle',
    'LimitRanger',
    'ServiceAccount',
    'PodSecurity',
    'Priority',
    'DefaultTolerationSeconds',
    'DefaultStorageClass',
    'RuntimeClass',
    'DefaultIngressClass',
    'MutatingAdmissionPolicy',
    'MutatingAdmissionWebhook',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionWebhook',
    'ResourceQuota',
    'AlwaysDeny',
  ]);
  // Enabling one that is on anyway changes nothing.
  t.deepEqual(parseFlags(['--enable-admission-plugins=NamespaceLifecycle']).admissionPlugins, parseFlags([]).admissionPlugins);
  t.is(ADMISSION_PLUGINS.at(-1)?.name, 'AlwaysDeny');
});

test('unknown names, and a name both enabled and disabled, are startup errors naming the flag (upstream\'s messages)', (t) => {
  const err = t.throws(() => parseFlags(['--enable-admission-plugins=PodSecurityPolicy']), { instanceOf: FlagError });
  t.regex(err.message, /enable-admission-plugins plugin "PodSecurityPolicy" is unknown/);
  t.regex(t.throws(() => parseFlags(['--disable-admission-plugins=Nope'])).message, /disable-admission-plugins plugin "Nope" is unknown/);
  t.deepEqual(selectAdmissionPlugins(['LimitRanger'], ['LimitRanger']), { errors: ['[LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped'] });
});
