/**
 * GET /configz: the configuration the agent runs with (flags, file and drop-ins merged and
 * defaulted), in the file's form, as upstream's kubelet answers {"kubeletconfig": {...}}. Here
 * the key is "nodeagentconfig" and the value carries its apiVersion and kind, so it can be saved
 * and loaded as a --config file. It holds paths and settings, no secrets.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../apiserver/api/errors';
import { encode } from '../config/field-spec';
import { nodeAgentConfigSchema } from '../config/schema';
import { configAPIVersion, configKind, type NodeAgentConfiguration } from '../config/types';
import { replyError, replyJson } from './status-reply';

export function configzHandler(config: NodeAgentConfiguration): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // Computed once: the configuration does not change while the agent runs.
  const body = { nodeagentconfig: { apiVersion: configAPIVersion, kind: configKind, ...(encode(config, nodeAgentConfigSchema) as object) } };
  // Nothing to wait for; the server awaits every handler inside its own try, so a throw here is handled as a rejection would be.
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      replyError(res, new ApiError('MethodNotAllowed', `method ${req.method ?? ''} not allowed; use GET`, undefined, 405));
      return Promise.resolve();
    }
    replyJson(res, 200, body);
    return Promise.resolve();
  };
}
