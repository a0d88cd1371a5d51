/**
 * Where the agent's .proto files are at run time, and how they are parsed. Found by walking up
 * from this module to the first folder holding the file, so the same code works from the source
 * tree, a compiled dist folder and the package's bundle (which ships proto/ beside it;
 * packaging/lib/bundle.mjs lists this module in runtimeLookups).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type * as protoLoader from '@grpc/proto-loader';

/**
 * What every wire shape in the agent assumes: proto field names (keepCase), int64 as decimal
 * strings, enums as names, defaults filled (absent sub-messages null), arrays always present.
 */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: false,
};

/** The first `<dir>/<relative>` walking up from `fromDir`; throws naming the file when there is none. */
export function findProtoFile(relative: string, fromDir: string = __dirname): string {
  for (let dir = path.resolve(fromDir); ; ) {
    const candidate = path.join(dir, relative);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${relative} above ${fromDir}`);
    dir = parent;
  }
}
