import test from 'ava';
import { isExtendedResourceName } from '../../../../agent/pluginregistry/resource-name';
import { refusal } from '../../../../agent/pluginregistry/validate';
import { resolveEndpoint } from '../../../../agent/pluginregistry/plugin-registry';

const info = (o: Partial<{ type: string; name: string; endpoint: string; supported_versions: string[] }> = {}) => ({
  type: 'DevicePlugin',
  name: 'example.com/foo',
  endpoint: '',
  supported_versions: ['v1beta1'],
  ...o,
});

test('extended resource names as upstream IsExtendedResourceName', (t) => {
  for (const ok of ['example.com/foo', 'vendor.io/gpu-1', 'a.b/c_d.e', 'nvidia.com/gpu']) t.true(isExtendedResourceName(ok), ok);
  for (const bad of ['foo', 'cpu', 'kubernetes.io/foo', 'sub.kubernetes.io/foo', 'requests.example.com/foo', 'Example.com/foo', 'example.com/', '/foo', 'example.com/-foo', 'a/b/c', `example.com/${'x'.repeat(64)}`]) {
    t.false(isExtendedResourceName(bad), bad);
  }
});

test('a device plugin speaking v1beta1 with an extended resource name is accepted', (t) => {
  t.is(refusal(info({ supported_versions: ['v1alpha', 'v1beta1'] }), '/r/x.sock'), undefined);
});

test('refusals carry upstream\'s messages', (t) => {
  t.is(refusal(info({ type: 'CSIPlugin' }), '/r/csi.sock'), 'RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket /r/csi.sock (svc-node does not support CSI plugins)');
  t.is(refusal(info({ type: 'Other' }), '/r/o.sock'), 'RegisterPlugin error -- no handler registered for plugin type: Other at socket /r/o.sock');
  t.is(
    refusal(info({ supported_versions: ['v1alpha', 'v2'] }), '/r/x.sock'),
    'RegisterPlugin error -- plugin validation failed with err: manager version, v1beta1, is not among plugin supported versions [v1alpha v2]',
  );
  t.is(refusal(info({ name: 'gpu' }), '/r/x.sock'), 'RegisterPlugin error -- plugin validation failed with err: invalid name of device plugin socket: the ResourceName "gpu" is invalid');
});

test('endpoint: empty means the registration socket; relative is taken in the socket\'s directory', (t) => {
  t.is(resolveEndpoint('', '/r/plugins_registry/foo.sock'), '/r/plugins_registry/foo.sock');
  t.is(resolveEndpoint('/run/foo/dp.sock', '/r/plugins_registry/foo.sock'), '/run/foo/dp.sock');
  t.is(resolveEndpoint('dp.sock', '/r/plugins_registry/foo.sock'), '/r/plugins_registry/dp.sock');
});
