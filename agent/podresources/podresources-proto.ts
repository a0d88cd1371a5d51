/**
 * Loads proto/podresources/v1/api.proto with the CRI loader's options (proto field names, int64
 * as decimal strings, defaults filled, arrays always present), found by findProtoFile.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile, PROTO_LOADER_OPTIONS } from '../platform/proto-files';

export const PODRESOURCES_PROTO_RELATIVE = path.join('proto', 'podresources', 'v1', 'api.proto');

let cached: grpc.ServiceClientConstructor | undefined;

/** The v1.PodResourcesLister service constructor (its `.service` is the server definition). Parsed once per process. */
export function loadPodResourcesProto(protoPath?: string): grpc.ServiceClientConstructor {
  if (cached && !protoPath) return cached;
  const file = protoPath ?? findProtoFile(PODRESOURCES_PROTO_RELATIVE);
  const def = protoLoader.loadSync(file, PROTO_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { v1?: { PodResourcesLister?: grpc.ServiceClientConstructor } };
  const svc = pkg.v1?.PodResourcesLister;
  if (!svc) throw new Error(`${file} does not define v1.PodResourcesLister`);
  if (!protoPath) cached = svc;
  return svc;
}
