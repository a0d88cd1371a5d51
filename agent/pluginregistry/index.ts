/** The plugin registry (<root-dir>/plugins_registry/) and the registrar interface it hands device plugins to. */
export { PluginRegistry, pluginRegistryDir, resolveEndpoint, PLUGIN_REGISTRY_DIR, type PluginRegistryOptions, type RegisteredPlugin } from './plugin-registry';
export { type DevicePluginRegistrar } from './registrar';
export { refusal, DEVICE_PLUGIN_API_VERSION, DEVICE_PLUGIN_TYPE, CSI_PLUGIN_TYPE } from './validate';
export { isExtendedResourceName } from './resource-name';
export { loadRegistrationProto, type PluginInfo, type RegistrationStatus } from './registration-proto';
