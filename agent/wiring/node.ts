/**
 * Start-up phase 6: the Node. Its status source (machine, addresses, pressure, readiness, the
 * runtime, device plugins' extended resources), then the node controller: registration (when
 * registerNode), then the Lease and status loops on the heartbeat client.
 */
import { svcVersion } from '../../common/version';
import type { DeviceManager } from '../devices/device-manager';
import type { RuntimeHealth } from '../cri';
import { nodeAddresses } from '../node/addresses';
import { declaredFeatures } from '../node/declared-features';
import type { EventRecorder } from '../../common/events/recorder';
import { NodeController } from '../node/node-controller';
import { NodeEvents } from '../node/node-events';
import { nodeLabels } from '../node/node-object';
import { ReadinessSource } from '../node/readiness';
import { NodeStatusSource } from '../node/status-source';
import type { MachineInfo } from '../platform/machine';
import { evaluatePressure, observePressure, PressureTracker } from '../platform/pressure';
import type { AgentContext } from './context';
import type { Credentials } from './credentials';

export interface NodeParts {
  machine: MachineInfo;
  runtimeHealth: RuntimeHealth;
  devices: DeviceManager;
  credentials: Credentials;
  /** The agent's event recorder. */
  recorder: EventRecorder;
}

export interface StartedNode {
  node: NodeController;
  /** The node's readiness (the runtime's health), also for /readyz. */
  readiness: ReadinessSource;
}

/** Registers the Node and starts its heartbeats; undefined when the signal aborted during registration. */
export async function startNodeController(ctx: AgentContext, p: NodeParts): Promise<StartedNode | undefined> {
  const { cfg, log, notifier, signal, clock, running, health, metrics } = ctx;
  const c = cfg.config;
  const nodeName = cfg.nodeName;
  const { client, heartbeatClient, identity } = p.credentials;
  const readiness = new ReadinessSource();
  readiness.add(p.runtimeHealth);
  const pressureTracker = new PressureTracker({ now: () => clock.now(), transitionPeriodMs: c.evictionPressureTransitionPeriod });
  const status = new NodeStatusSource({
    machine: p.machine,
    addresses: () => nodeAddresses(nodeName, cfg.flags.nodeIPs),
    pressure: async () => {
      const obs = await observePressure({ rootDir: cfg.flags.rootDir });
      return pressureTracker.update(evaluatePressure(obs, { evictionHard: c.evictionHard, evictionSoft: c.evictionSoft }));
    },
    readiness,
    runtime: p.runtimeHealth,
    resources: { maxPods: c.maxPods, systemReserved: c.systemReserved, kubeReserved: c.kubeReserved, evictionHard: c.evictionHard },
    svcVersion: svcVersion(),
    declaredFeatures: declaredFeatures(cfg.featureGates),
    port: c.port,
    extendedResources: () => p.devices.extendedResources(),
  });
  const events = new NodeEvents(p.recorder, nodeName);
  // Upstream records "Starting kubelet." once its recorder runs, before registering.
  events.starting();
  const node = new NodeController({
    events,
    client,
    heartbeatClient,
    clock,
    logFor: (component) => log.child({ component }),
    identity: { name: nodeName, labels: nodeLabels(nodeName, p.machine, cfg.flags.nodeLabels), taints: c.registerWithTaints, providerID: c.providerID || undefined },
    status,
    registerNode: c.registerNode,
    leaseDurationSeconds: c.nodeLeaseDurationSeconds,
    updateFrequencyMs: c.nodeStatusUpdateFrequency,
    reportFrequencyMs: c.nodeStatusReportFrequency,
    health,
    observer: metrics,
    // A half-open connection must not swallow heartbeats (kubelet: closeAllConns); the main
    // client's watches reconnect by themselves after a redial.
    onRepeatedFailure: async () => {
      await Promise.all([heartbeatClient.redial(), client.redial()]);
    },
  });

  if (c.registerNode) {
    notifier.status(`registering node ${nodeName}`);
    log.info({ node: nodeName, server: identity.config.server }, 'registering node');
    if (!(await node.register(signal))) return undefined; // aborted
  } else {
    log.info({ node: nodeName }, 'registerNode is false: not creating the Node; heartbeating an existing one');
  }
  running.loops.push(node.run(signal));
  return { node, readiness };
}
