/**
 * GET /configz: the configuration the agent runs with (flags, file and drop-ins merged and
 * defaulted), in the file's form, as upstream's kubelet answers {"kubeletconfig": {...}}. Here
 * the key is "nodeagentconfig" and the value carries its apiVersion and kind, so it can be saved
 * and loaded as a --config file. It holds paths and settings, no secrets.
 */
import type { IncomingMessage } from 'node:http';
import { encode } from '../config/field-spec';
import { nodeAgentConfigSchema } from '../config/schema';
import { configAPIVersion, configKind, type NodeAgentConfiguration } from '../config/types';
import { MethodNotAllowedError } from '../errors';

/** Resolves the JSON body; rejects MethodNotAllowedError for methods other than GET and HEAD. */
export function configzHandler(config: NodeAgentConfiguration): (req: IncomingMessage) => Promise<unknown> {
  // Computed once: the configuration does not change while the agent runs.
  const body = { nodeagentconfig: { apiVersion: configAPIVersion, kind: configKind, ...(encode(config, nodeAgentConfigSchema) as object) } };
  return (req) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return Promise.reject(new MethodNotAllowedError(`method ${req.method ?? ''} not allowed; use GET`));
    return Promise.resolve(body);
  };
}
