import type { KObject } from '../../api/types';
import { get, num, rec, recs, str, strAt, type JsonMap } from '../obj-access';
import type { TableColumn } from '../resource-type';
import { ageColumn, column, translateTimestampSince, type Now } from '../table';

/** Pod table columns as upstream's printPod (kubectl get pods and -o wide). */

/** Upstream node.NodeUnreachablePodReason. */
const NODE_LOST = 'NodeLost';

function terminated(state: unknown): JsonMap | undefined {
  return rec(get(state, 'terminated'));
}

function later(a: string, b: unknown): string {
  const s = str(b);
  if (!s) return a;
  return !a || Date.parse(s) > Date.parse(a) ? s : a;
}

interface PodSummary {
  ready: string;
  status: string;
  restarts: number;
  lastRestart: string;
}

/** The READY, STATUS and RESTARTS computation of upstream printPod. */
export function summarizePod(o: KObject): PodSummary {
  const spec = rec(o.spec) ?? {};
  const status = rec(o.status) ?? {};
  let restarts = 0;
  let sidecarRestarts = 0;
  let total = recs(spec.containers).length;
  let ready = 0;
  let lastRestart = '';
  let lastSidecarRestart = '';
  const phase = strAt(status, 'phase');
  let reason = strAt(status, 'reason') || phase;
  for (const c of recs(status.conditions)) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }
  const inits = new Map(recs(spec.initContainers).map((c) => [strAt(c, 'name'), c]));
  const isSidecar = (name: string) => inits.get(name)?.restartPolicy === 'Always';
  for (const c of inits.values()) if (c.restartPolicy === 'Always') total++;

  let initializing = false;
  const initStatuses = recs(status.initContainerStatuses);
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    const name = strAt(cs, 'name');
    const rc = num(cs.restartCount) ?? 0;
    restarts += rc;
    const lastTerm = terminated(cs.lastState);
    if (lastTerm) lastRestart = later(lastRestart, lastTerm.finishedAt);
    if (isSidecar(name)) {
      sidecarRestarts += rc;
      if (lastTerm) lastSidecarRestart = later(lastSidecarRestart, lastTerm.finishedAt);
    }
    const term = terminated(cs.state);
    const waitingReason = strAt(cs, 'state', 'waiting', 'reason');
    if (term && (num(term.exitCode) ?? 0) === 0) continue;
    if (isSidecar(name) && cs.started === true) {
      if (cs.ready === true) ready++;
      continue;
    }
    if (term) {
      const r = str(term.reason);
      if (!r) {
        const sig = num(term.signal) ?? 0;
        reason = sig !== 0 ? `Init:Signal:${sig}` : `Init:ExitCode:${num(term.exitCode) ?? 0}`;
      } else reason = `Init:${r}`;
    } else if (waitingReason && waitingReason !== 'PodInitializing') {
      reason = `Init:${waitingReason}`;
    } else {
      reason = `Init:${i}/${inits.size}`;
    }
    initializing = true;
    break;
  }

  const initializedTrue = recs(status.conditions).some((c) => c.type === 'Initialized' && c.status === 'True');
  if (!initializing || initializedTrue) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = recs(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      restarts += num(cs.restartCount) ?? 0;
      const lastTerm = terminated(cs.lastState);
      if (lastTerm) lastRestart = later(lastRestart, lastTerm.finishedAt);
      const waitingReason = strAt(cs, 'state', 'waiting', 'reason');
      const term = terminated(cs.state);
      if (waitingReason) reason = waitingReason;
      else if (term && str(term.reason)) reason = str(term.reason) ?? reason;
      else if (term) {
        const sig = num(term.signal) ?? 0;
        reason = sig !== 0 ? `Signal:${sig}` : `ExitCode:${num(term.exitCode) ?? 0}`;
      } else if (cs.ready === true && rec(get(cs, 'state', 'running'))) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const podReady = recs(status.conditions).some((c) => c.type === 'Ready' && c.status === 'True');
      reason = podReady ? 'Running' : 'NotReady';
    }
  }

  if (o.metadata?.deletionTimestamp && strAt(status, 'reason') === NODE_LOST) reason = 'Unknown';
  else if (o.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  return { ready: `${ready}/${total}`, status: reason, restarts, lastRestart };
}

function none(v: string): string {
  return v || '<none>';
}

function readinessGates(o: KObject): string {
  const gates = recs(get(o, 'spec', 'readinessGates'));
  if (gates.length === 0) return '<none>';
  const conds = recs(get(o, 'status', 'conditions'));
  let trueCount = 0;
  for (const g of gates) {
    const c = conds.find((x) => x.type === g.conditionType);
    if (c?.status === 'True') trueCount++;
  }
  return `${trueCount}/${gates.length}`;
}

export function podColumns(now: Now): TableColumn[] {
  return [
    column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.', (o) => summarizePod(o).ready),
    column('Status', 'string', 'The aggregate status of the containers in this pod.', (o) => summarizePod(o).status),
    column(
      'Restarts',
      'string',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      (o) => {
        const s = summarizePod(o);
        return s.restarts !== 0 && s.lastRestart ? `${s.restarts} (${translateTimestampSince(s.lastRestart, now)} ago)` : String(s.restarts);
      },
    ),
    ageColumn(now),
    column('IP', 'string', 'IP address allocated to the pod.', (o) => none(strAt(recs(get(o, 'status', 'podIPs'))[0], 'ip') || strAt(o, 'status', 'podIP')), 1),
    column('Node', 'string', 'NodeName is the node the pod is scheduled onto.', (o) => none(strAt(o, 'spec', 'nodeName')), 1),
    column('Nominated Node', 'string', 'nominatedNodeName is set when this pod preempts other pods on the node.', (o) => none(strAt(o, 'status', 'nominatedNodeName')), 1),
    column('Readiness Gates', 'string', 'If specified, all readiness gates will be evaluated for pod readiness.', readinessGates, 1),
  ];
}
