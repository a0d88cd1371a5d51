/**
 * Which plugins the registry accepts, with upstream's messages (pluginmanager operation generator
 * and the device manager's ValidatePlugin), so operators and plugins see familiar errors.
 * Only DevicePlugin is handled; CSIPlugin and anything else is refused as upstream refuses a type
 * with no handler.
 */
import { isExtendedResourceName } from './resource-name';
import type { PluginInfo } from './registration-proto';

export const DEVICE_PLUGIN_TYPE = 'DevicePlugin';
export const CSI_PLUGIN_TYPE = 'CSIPlugin';
/** The device plugin API version the device manager speaks. */
export const DEVICE_PLUGIN_API_VERSION = 'v1beta1';

/** Go's %v of a string slice, as upstream's messages print it. */
const goList = (xs: readonly string[]) => `[${xs.join(' ')}]`;

/** Why the plugin at `socketPath` cannot be registered, or undefined when it can. */
export function refusal(info: PluginInfo, socketPath: string): string | undefined {
  if (info.type !== DEVICE_PLUGIN_TYPE) {
    const why = info.type === CSI_PLUGIN_TYPE ? ' (svc-node does not support CSI plugins)' : '';
    return `RegisterPlugin error -- no handler registered for plugin type: ${info.type} at socket ${socketPath}${why}`;
  }
  if (!info.supported_versions.includes(DEVICE_PLUGIN_API_VERSION)) {
    return `RegisterPlugin error -- plugin validation failed with err: manager version, ${DEVICE_PLUGIN_API_VERSION}, is not among plugin supported versions ${goList(info.supported_versions)}`;
  }
  if (!isExtendedResourceName(info.name)) {
    return `RegisterPlugin error -- plugin validation failed with err: invalid name of device plugin socket: the ResourceName "${info.name}" is invalid`;
  }
  return undefined;
}
