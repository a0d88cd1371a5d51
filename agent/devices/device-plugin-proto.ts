/**
 * Loads proto/deviceplugin/v1beta1/api.proto (upstream's device plugin API, unchanged wire) with
 * the agent's loader options, found by findProtoFile (agent/platform/proto-files.ts).
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile, PROTO_LOADER_OPTIONS } from '../platform/proto-files';

export const DEVICE_PLUGIN_PROTO_RELATIVE = path.join('proto', 'deviceplugin', 'v1beta1', 'api.proto');

/** The only API version the agent accepts in RegisterRequest.version. */
export const DEVICE_PLUGIN_VERSION = 'v1beta1';

export interface DevicePluginProto {
  /** Served by the agent (kubelet.sock). */
  Registration: grpc.ServiceClientConstructor;
  /** Served by each plugin. */
  DevicePlugin: grpc.ServiceClientConstructor;
}

let cached: DevicePluginProto | undefined;

/** Parses the proto once per process and returns both service constructors. Throws if missing or invalid. */
export function loadDevicePluginProto(): DevicePluginProto {
  if (cached) return cached;
  const protoPath = findProtoFile(DEVICE_PLUGIN_PROTO_RELATIVE);
  const def = protoLoader.loadSync(protoPath, PROTO_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    v1beta1?: { Registration?: grpc.ServiceClientConstructor; DevicePlugin?: grpc.ServiceClientConstructor };
  };
  const v = pkg.v1beta1;
  if (!v?.Registration || !v.DevicePlugin) throw new Error(`${protoPath} does not define v1beta1 Registration and DevicePlugin`);
  cached = { Registration: v.Registration, DevicePlugin: v.DevicePlugin };
  return cached;
}
