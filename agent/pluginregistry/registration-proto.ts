/**
 * Loads proto/pluginregistration/v1/api.proto (package pluginregistration, service Registration)
 * with the agent's loader options, found by findProtoFile.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile, PROTO_LOADER_OPTIONS } from '../platform/proto-files';

export const REGISTRATION_PROTO_RELATIVE = path.join('proto', 'pluginregistration', 'v1', 'api.proto');

let cached: grpc.ServiceClientConstructor | undefined;

/** The pluginregistration.Registration service constructor (its `.service` serves it). Parsed once per process. */
export function loadRegistrationProto(protoPath?: string): grpc.ServiceClientConstructor {
  if (cached && !protoPath) return cached;
  const file = protoPath ?? findProtoFile(REGISTRATION_PROTO_RELATIVE);
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(file, PROTO_LOADER_OPTIONS)) as unknown as {
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
