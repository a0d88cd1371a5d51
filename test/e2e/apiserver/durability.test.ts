import test from 'ava';
import { startApiServer } from '../../helpers/apiserver-process';
import { call } from '../../helpers/http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// An acknowledged write survives kill -9 of the server (issue 2, point 1).
test('writes acknowledged before kill -9 are there after restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-durable-'));
  try {
    const s = await startApiServer({ dataDir });
    const acked: Array<{ name: string; rv: string }> = [];
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; ; i++) {
        const r = await call(s.admin, 'POST', `${s.url}/api/v1/namespaces/default/configmaps`, { metadata: { name: `w${w}-${i}` }, data: { i: String(i) } }).catch(() => undefined);
        if (!r || r.status !== 201) return;
        acked.push({ name: r.body.metadata.name, rv: r.body.metadata.resourceVersion });
      }
    });
    while (acked.length < 200) await new Promise((r) => setTimeout(r, 20));
    s.proc.kill('SIGKILL');
    await Promise.all(writers);
    await s.stop();
    const again = await startApiServer({ dataDir, port: s.port });
    try {
      for (const a of acked) {
        const g = await call(again.admin, 'GET', `${again.url}/api/v1/namespaces/default/configmaps/${a.name}`);
        t.is(g.status, 200, `${a.name} lost`);
        t.is(g.body.metadata.resourceVersion, a.rv);
      }
    } finally {
      await again.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
