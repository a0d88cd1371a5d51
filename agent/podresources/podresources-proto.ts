/**
 * Loads proto/podresources/v1/api.proto with the CRI loader's options (proto field names, int64
 * as decimal strings, defaults filled, arrays always present). Found at run time by walking up
 * from this module, as cri-proto.ts does, so it works from the source tree, a dist folder and the
 * bundle (packaging ships every proto/ file under /usr/lib/svc/proto; packaging/lib/bundle.mjs
 * lists this module in runtimeLookups).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

export const PODRESOURCES_PROTO_RELATIVE = path.join('proto', 'podresources', 'v1', 'api.proto');

export const PODRESOURCES_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: false,
};

/** The first proto/podresources/v1/api.proto found walking up from `fromDir`; throws when there is none. */
export function findPodResourcesProto(fromDir: string = __dirname): string {
  for (let dir = path.resolve(fromDir); ; ) {
    const candidate = path.join(dir, PODRESOURCES_PROTO_RELATIVE);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${PODRESOURCES_PROTO_RELATIVE} above ${fromDir}`);
    dir = parent;
  }
}

let cached: grpc.ServiceClientConstructor | undefined;

/** The v1.PodResourcesLister service constructor (its `.service` is the server definition). Parsed once per process. */
export function loadPodResourcesProto(protoPath?: string): grpc.ServiceClientConstructor {
  if (cached && !protoPath) return cached;
  const file = protoPath ?? findPodResourcesProto();
  const def = protoLoader.loadSync(file, PODRESOURCES_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as { v1?: { PodResourcesLister?: grpc.ServiceClientConstructor } };
  const svc = pkg.v1?.PodResourcesLister;
  if (!svc) throw new Error(`${file} does not define v1.PodResourcesLister`);
  if (!protoPath) cached = svc;
  return svc;
}
