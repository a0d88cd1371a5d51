import test from 'ava';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadAgentConfig } from '../../../../agent/config/load';
import { configzHandler } from '../../../../agent/server/configz-handler';
import { answer } from '../../../../agent/server/node-server';

/** Runs the handler on a fake request behind the server's edge; the status and the JSON answered. */
async function call(h: ReturnType<typeof configzHandler>, method: string): Promise<{ status: number; body: Record<string, any> }> {
  let status = 0;
  let text = '';
  const res = {
    writeHead(code: number) {
      status = code;
      return this;
    },
    setHeader() {},
    end(b?: string | Buffer) {
      text += b?.toString() ?? '';
    },
  } as unknown as ServerResponse;
  await answer(h, { method, headers: {} } as IncomingMessage, res);
  return { status, body: JSON.parse(text) };
}

const env = (files: Record<string, string>) => ({
  readFile: (p: string) => (p in files ? Promise.resolve(files[p]) : Promise.reject(Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' }))),
  readdir: () => Promise.resolve([]),
  hostname: () => 'n1',
  cwd: '/',
});

test('/configz answers the running configuration in file form, and loading that answer gives the same configuration', async (t) => {
  const file = ['apiVersion: nodeagent.config.svc.io/v1beta1', 'kind: NodeAgentConfiguration', 'nodeStatusUpdateFrequency: 7s', 'maxPods: 42', 'evictionHard:', '  memory.available: 300Mi', ''].join('\n');
  const cfg = await loadAgentConfig(['--config=/etc/svc/node.yaml'], env({ '/etc/svc/node.yaml': file }));
  const r = await call(configzHandler(cfg.config), 'GET');
  t.is(r.status, 200);
  const answered = r.body['nodeagentconfig'];
  t.like(answered, { apiVersion: 'nodeagent.config.svc.io/v1beta1', kind: 'NodeAgentConfiguration', nodeStatusUpdateFrequency: '7s', maxPods: 42 });
  t.deepEqual(answered.evictionHard, { 'memory.available': '300Mi' });
  const reloaded = await loadAgentConfig(['--config=/c.json'], env({ '/c.json': JSON.stringify(answered) }));
  t.deepEqual(reloaded.config, cfg.config);
});

test('/configz refuses other methods', async (t) => {
  const cfg = await loadAgentConfig([], env({}));
  t.is((await call(configzHandler(cfg.config), 'POST')).status, 405);
});
