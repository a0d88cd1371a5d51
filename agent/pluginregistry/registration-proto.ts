/**
 * Loads proto/pluginregistration/v1/api.proto (package pluginregistration, service Registration)
 * with the CRI loader's options. Found at run time by walking up from this module, as
 * cri-proto.ts does (packaging ships proto/; packaging/lib/bundle.mjs lists this module).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const REGISTRATION_PROTO_RELATIVE = path.join('proto', 'pluginregistration', 'v1', 'api.proto');

const LOADER_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, arrays: true, objects: true, oneofs: false };

/** The first proto/pluginregistration/v1/api.proto found walking up from `fromDir`; throws when there is none. */
export function findRegistrationProto(fromDir: string = __dirname): string {
  for (let dir = path.resolve(fromDir); ; ) {
    const candidate = path.join(dir, REGISTRATION_PROTO_RELATIVE);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${REGISTRATION_PROTO_RELATIVE} above ${fromDir}`);
    dir = parent;
  }
}

let cached: grpc.ServiceClientConstructor | undefined;

/** The pluginregistration.Registration service constructor (its `.service` serves it). Parsed once per process. */
export function loadRegistrationProto(protoPath?: string): grpc.ServiceClientConstructor {
  if (cached && !protoPath) return cached;
  const file = protoPath ?? findRegistrationProto();
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(file, LOADER_OPTIONS)) as unknown as {
    pluginregistration?: { Registration?: grpc.ServiceClientConstructor };
  };
  const svc = pkg.pluginregistration?.Registration;
  if (!svc) throw new Error(`${file} does not define pluginregistration.Registration`);
  if (!protoPath) cached = svc;
  return svc;
}

/** PluginInfo as decoded. */
export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supported_versions: string[];
}

/** RegistrationStatus as sent. */
export interface RegistrationStatus {
  plugin_registered: boolean;
  error: string;
}
