/**
 * Loads proto/cri/runtime/v1/api.proto with the options every CRI wire shape in ./wire-types
 * assumes: proto field names (keepCase), int64 as decimal strings, enums as names, defaults filled
 * (absent sub-messages null). One load per client or server; it takes ~0.1 s.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile, PROTO_LOADER_OPTIONS } from '../platform/proto-files';

export const CRI_PROTO_RELATIVE = path.join('proto', 'cri', 'runtime', 'v1', 'api.proto');

/** The loader options of every agent proto (agent/platform/proto-files.ts). */
export const CRI_LOADER_OPTIONS = PROTO_LOADER_OPTIONS;

export interface CriProto {
  RuntimeService: grpc.ServiceClientConstructor;
  ImageService: grpc.ServiceClientConstructor;
}

/**
 * Finds the proto by walking up from `fromDir` (this module's directory, in the source tree or
 * in a compiled dist folder) to the first folder holding proto/cri/runtime/v1/api.proto.
 */
export function findCriProto(fromDir?: string): string {
  return findProtoFile(CRI_PROTO_RELATIVE, fromDir);
}

/** Parses the CRI proto and returns the two service constructors. Throws if the file is missing or invalid. */
export function loadCriProto(protoPath: string = findCriProto()): CriProto {
  const def = protoLoader.loadSync(protoPath, CRI_LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    runtime?: { v1?: { RuntimeService?: grpc.ServiceClientConstructor; ImageService?: grpc.ServiceClientConstructor } };
  };
  const v1 = pkg.runtime?.v1;
  if (!v1?.RuntimeService || !v1.ImageService) throw new Error(`${protoPath} does not define runtime.v1 RuntimeService and ImageService`);
  return { RuntimeService: v1.RuntimeService, ImageService: v1.ImageService };
}
