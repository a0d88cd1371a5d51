/**
 * GET /pods: the pods the agent runs (or is terminating) as a v1 PodList, each with the status the
 * agent last computed, as upstream's kubelet /pods endpoint answers.
 */
import type { IncomingMessage } from 'node:http';
import type { Pod } from '../api/core-v1';
import { MethodNotAllowedError } from '../errors';

/** The pods the agent runs. */
export interface PodLister {
  /** Every pod with a worker, with its latest status. Never throws. */
  runningPods(): Pod[];
}

/** Resolves the PodList; rejects MethodNotAllowedError for methods other than GET and HEAD. */
export function podsHandler(pods: PodLister): (req: IncomingMessage) => Promise<unknown> {
  return (req) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return Promise.reject(new MethodNotAllowedError(`method ${req.method ?? ''} not allowed; use GET`));
    return Promise.resolve({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods.runningPods() });
  };
}
