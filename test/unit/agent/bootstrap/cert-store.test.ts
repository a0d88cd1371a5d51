import test from 'ava';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, issue } from '../../../../apiserver/pki/certs';
import { CertStore } from '../../../../agent/bootstrap/cert-store';

test('stores pairs as timestamped 0600 files behind an atomically swapped -current symlink', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-store-'));
  try {
    const ca = await createCA('ca');
    const a = await issue(ca, { commonName: 'system:node:a', usage: 'client', validityMs: 3600_000 });
    const b = await issue(ca, { commonName: 'system:node:a', usage: 'client', validityMs: 7200_000 });
    const now = Date.UTC(2025, 2, 4, 5, 6, 7);
    const store = new CertStore(join(dir, 'pki'), () => now);
    t.is(await store.current(), undefined);
    const f1 = await store.update(a.certPem, a.keyPem);
    t.is(f1, join(dir, 'pki', 'svc-node-client-2025-03-04-05-06-07.pem'));
    t.is(statSync(f1).mode & 0o777, 0o600);
    t.is(statSync(join(dir, 'pki')).mode & 0o777, 0o700);
    t.true(lstatSync(store.currentPath).isSymbolicLink());
    t.is(readlinkSync(store.currentPath), 'svc-node-client-2025-03-04-05-06-07.pem');
    const cur = await store.current();
    t.is(cur!.certPem.trim(), a.certPem.trim());
    t.is(cur!.keyPem.trim(), a.keyPem.trim());
    const f2 = await store.update(b.certPem, b.keyPem);
    t.is(f2, join(dir, 'pki', 'svc-node-client-2025-03-04-05-06-07-1.pem'), 'same second: a new file, the old one untouched');
    t.is((await store.current())!.certPem.trim(), b.certPem.trim());
    t.is(readFileSync(f1, 'utf8').trim(), (a.certPem.trim() + '\n' + a.keyPem.trim()));
    t.deepEqual(readdirSync(join(dir, 'pki')).filter((n) => n.includes('.new-') || n.includes('.partial-')), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a pair whose key does not match, or garbage, is not current', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-store-'));
  try {
    const ca = await createCA('ca');
    const a = await issue(ca, { commonName: 'x', usage: 'client', validityMs: 3600_000 });
    const b = await issue(ca, { commonName: 'y', usage: 'client', validityMs: 3600_000 });
    const store = new CertStore(dir);
    writeFileSync(store.currentPath, a.certPem + b.keyPem);
    t.is(await store.current(), undefined);
    writeFileSync(store.currentPath, 'garbage');
    t.is(await store.current(), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the pending key is kept 0600 until cleared', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'h5-store-'));
  try {
    const store = new CertStore(join(dir, 'pki'));
    t.is(await store.pendingKey(), undefined);
    await store.savePendingKey('KEY');
    t.is(store.pendingKeyPath, join(dir, 'pki', 'svc-node-client.key.tmp'));
    t.is(statSync(store.pendingKeyPath).mode & 0o777, 0o600);
    t.is(await store.pendingKey(), 'KEY');
    await store.clearPendingKey();
    t.is(await store.pendingKey(), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
