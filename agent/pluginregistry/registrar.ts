/**
 * What the plugin registry hands device plugins to (the device manager implements it; upstream's
 * PluginHandler for type DevicePlugin). Defined here, at the consumer.
 */

export interface DevicePluginRegistrar {
  /**
   * Registers the device plugin serving `resourceName` (a valid extended resource name, already
   * checked) on `endpoint` (an absolute unix socket path) that speaks `versions` (already checked
   * to include "v1beta1"): dial it, read its options, start consuming ListAndWatch (upstream
   * RegisterPlugin -> connectClient). Resolves once registered; rejects with an Error whose
   * message is sent back to the plugin in NotifyRegistrationStatus. Registering a resource again
   * replaces its earlier endpoint. Calls for different sockets may overlap; one socket's calls
   * never do. Should settle in bounded time (that socket waits for it).
   */
  register(resourceName: string, endpoint: string, versions: readonly string[]): Promise<void>;
  /**
   * The registration socket that registered `resourceName` on `endpoint` went away (upstream
   * DeRegisterPlugin: the endpoint is marked stopped; its devices turn unhealthy and go after the
   * grace period). Must ignore a call whose endpoint is no longer the resource's current one (it
   * was replaced by a later registration). Never throws.
   */
  deregister(resourceName: string, endpoint: string): void;
}
