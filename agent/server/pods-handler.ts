/**
 * GET /pods: the pods the agent runs (or is terminating) as a v1 PodList, each with the status the
 * agent last computed, as upstream's kubelet /pods endpoint answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../apiserver/api/errors';
import type { Pod } from '../pod/pod-types';
import { replyError, replyJson } from './status-reply';

/** The pods the agent runs. */
export interface PodLister {
  /** Every pod with a worker, with its latest status. Never throws. */
  runningPods(): Pod[];
}

export function podsHandler(pods: PodLister): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // Nothing to wait for; the server awaits every handler inside its own try, so a throw here is handled as a rejection would be.
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      replyError(res, new ApiError('MethodNotAllowed', `method ${req.method ?? ''} not allowed; use GET`, undefined, 405));
      return Promise.resolve();
    }
    replyJson(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods.runningPods() });
    return Promise.resolve();
  };
}
