import { request } from 'undici';
import type { RunningApiServer } from '../../test/helpers/apiserver-process';
import { sleep } from './load';

/** Whether the Node's Ready condition is True (read as the admin); false when the Node is absent. */
export async function nodeReady(api: RunningApiServer, name: string): Promise<boolean> {
  const res = await request(`${api.url}/api/v1/nodes/${name}`, { dispatcher: api.admin });
  const text = await res.body.text();
  if (res.statusCode !== 200) return false;
  const node = JSON.parse(text) as { status?: { conditions?: { type: string; status: string }[] } };
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Polls the Node until its Ready condition is True; throws after boundMs. */
export async function waitNodeReady(api: RunningApiServer, name: string, boundMs: number): Promise<void> {
  const end = Date.now() + boundMs;
  while (!(await nodeReady(api, name).catch(() => false))) {
    if (Date.now() > end) throw new Error(`node ${name} not Ready within ${boundMs / 1000} s`);
    await sleep(250);
  }
}
