/**
 * A node on real peers for e2e tests: the test's own containerd (./containerd), a real
 * svc-apiserver and a real svc-node pointed at that containerd (its socket and pod log root),
 * started in that order; resolves once the node is registered and heartbeating. stop() tears
 * down in reverse (the agent first, so it restarts nothing) and removes the agent's folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAgent, type AgentProcess } from '../e2e/agent/agent-process';
import { startApiServer, type RunningApiServer } from './apiserver-process';
import { startContainerd, type Containerd } from './containerd';

export interface ContainerdNodeOptions {
  nodeName: string;
  /** NodeAgentConfiguration lines besides the runtime endpoint and podLogsDir. */
  configLines?: string[];
  args?: string[];
  /** Flags of the API server (default none). */
  apiArgs?: string[];
  /** How long registration may take (default 90 s). */
  registerBoundMs?: number;
}

export interface ContainerdNode {
  ctrd: Containerd;
  api: RunningApiServer;
  agent: AgentProcess;
  /** The agent's folder (root dir, config, lock file). */
  dir: string;
  /** Kills the agent, runs `beforeRuntimeStop` (containerd still as the test left it), stops the API server and containerd. Never rejects. */
  stop(beforeRuntimeStop?: () => Promise<void>): Promise<void>;
}

export async function startContainerdNode(o: ContainerdNodeOptions): Promise<ContainerdNode> {
  const ctrd = await startContainerd();
  let api: RunningApiServer | undefined;
  let agent: AgentProcess | undefined;
  let dir: string | undefined;
  const stop = async (beforeRuntimeStop?: () => Promise<void>) => {
    await agent?.stop('SIGKILL');
    await beforeRuntimeStop?.().catch(() => undefined);
    await api?.stop();
    await ctrd.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    api = await startApiServer(o.apiArgs ? { args: o.apiArgs } : {});
    dir = mkdtempSync(path.join(tmpdir(), `svc-${o.nodeName}-`));
    agent = startAgent({
      dir,
      nodeName: o.nodeName,
      kubeconfig: api.kubeconfig,
      args: o.args,
      // The pod network (agent/podnet) looks at this containerd's CNI directory, never the host's
      // /etc/cni/net.d, and adds no routes to the host's table (test/helpers/netns-cluster.ts
      // runs nodes in namespaces of their own for that).
      configLines: [`containerRuntimeEndpoint: ${ctrd.endpoint}`, `podLogsDir: ${ctrd.logRoot}`, `cniConfDir: ${ctrd.cniConfDir}`, 'configurePodCIDRRoutes: false', ...(o.configLines ?? [])],
    });
    await agent.waitForLog('node registered and heartbeating', o.registerBoundMs ?? 90_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return { ctrd, api, agent, dir, stop };
}
