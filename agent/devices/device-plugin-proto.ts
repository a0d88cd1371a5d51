/**
 * Loads proto/deviceplugin/v1beta1/api.proto (upstream's device plugin API, unchanged wire) with
 * the same loader options as the CRI proto (agent/cri/cri-proto.ts): proto field names (keepCase),
 * int64 as decimal strings, defaults filled. The file is found by walking up from this module, so
 * it works from the source tree, a dist folder and the package (which ships /usr/lib/svc/proto).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { CRI_LOADER_OPTIONS } from '../cri/cri-proto';

export const DEVICE_PLUGIN_PROTO_RELATIVE = path.join('proto', 'deviceplugin', 'v1beta1', 'api.proto');

/** The only API version the agent accepts in RegisterRequest.version. */
export const DEVICE_PLUGIN_VERSION = 'v1beta1';

export interface DevicePluginProto {
  /** Served by the agent (kubelet.sock). */
  Registration: grpc.ServiceClientConstructor;
  /** Served by each plugin. */
  DevicePlugin: grpc.ServiceClientConstructor;
}

/** Walks up from `fromDir` to the first folder holding proto/deviceplugin/v1beta1/api.proto. */
export function findDevicePluginProto(fromDir: string = __dirname): string {
  let dir = path.resolve(fromDir);
  for (;;) {
    const candidate = path.join(dir, DEVICE_PLUGIN_PROTO_RELATIVE);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${DEVICE_PLUGIN_PROTO_RELATIVE} above ${fromDir}`);
    dir = parent;
  }
}

let cached: DevicePluginProto | undefined;

/** Parses the proto once per process and returns both service constructors. Throws if missing or invalid. */
export function loadDevicePluginProto(): DevicePluginProto {
  if (cached) return cached;
  const protoPath = findDevicePluginProto();
  const def = protoLoader.loadSync(protoPath, CRI_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    v1beta1?: { Registration?: grpc.ServiceClientConstructor; DevicePlugin?: grpc.ServiceClientConstructor };
  };
  const v = pkg.v1beta1;
  if (!v?.Registration || !v.DevicePlugin) throw new Error(`${protoPath} does not define v1beta1 Registration and DevicePlugin`);
  cached = { Registration: v.Registration, DevicePlugin: v.DevicePlugin };
  return cached;
}
