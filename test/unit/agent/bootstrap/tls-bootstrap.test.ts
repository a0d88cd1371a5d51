import test from 'ava';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCA, issue, type KeyPairPem } from '../../../../apiserver/pki/certs';
import { kubeconfig as renderAdminKubeconfig } from '../../../../apiserver/pki/bootstrap';
import { CertStore } from '../../../../agent/bootstrap/cert-store';
import { CsrDeniedError } from '../../../../agent/bootstrap/request-certificate';
import { BootstrapError, clientCertProblem, loadOrBootstrapIdentity, type BootstrapDeps } from '../../../../agent/bootstrap/tls-bootstrap';
import { certificateInfo } from '../../../../agent/bootstrap/pem';
import { csrResource } from '../../../../agent/client/resources';
import type { RestConfig } from '../../../../agent/client/rest-config';
import { FakeApiClient } from '../node/fakes/fake-api-client';
import { FakeClock } from '../../../helpers/fake-clock';
import { MemLog } from '../node/fakes/mem-log';
import { signCsrObject } from './signer';

let ca: KeyPairPem;
test.before(async () => {
  ca = await createCA('cluster-ca');
});

const TOKEN = 'abcdef.0123456789abcdef';

function setup(o: { deny?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'h5-boot-'));
  const client = new FakeApiClient();
  const made: RestConfig[] = [];
  const log = new MemLog();
  client.onWrite = (c, obj) => {
    if (c.verb !== 'create' || c.resource !== 'certificatesigningrequests') return;
    const name = obj.metadata.name!;
    if (o.deny) {
      client.mutate(csrResource, name, undefined, (x) => (x['status'] = { conditions: [{ type: 'Denied', status: 'True', reason: 'NotAllowed', message: 'no' }] }));
      return;
    }
    void signCsrObject(ca, obj, { validityMs: 3600_000 }).then((cert) =>
      client.mutate(csrResource, name, undefined, (x) => {
        x['status'] = { conditions: [{ type: 'Approved', status: 'True' }], certificate: Buffer.from(cert).toString('base64') };
      }),
    );
  };
  const bootstrapPath = join(dir, 'bootstrap-kubeconfig');
  writeFileSync(bootstrapPath, renderAdminKubeconfig({ server: 'https://127.0.0.1:6443', caPem: ca.certPem, user: 'bootstrap', token: TOKEN }));
  const deps: BootstrapDeps = {
    kubeconfigPath: join(dir, 'etc', 'kubelet.conf'),
    bootstrapKubeconfigPath: bootstrapPath,
    store: new CertStore(join(dir, 'pki')),
    nodeName: 'worker-1',
    clock: new FakeClock(Date.now()),
    log,
    makeClient: (cfg) => {
      made.push(cfg);
      return client;
    },
  };
  return { dir, client, made, deps, log, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

test('bootstraps with the token: key, CSR, certificate in the store, kubeconfig pointing at -current', async (t) => {
  const s = setup();
  try {
    const id = await loadOrBootstrapIdentity(s.deps, new AbortController().signal);
    t.is(id.origin, 'bootstrap');
    t.is(s.made.length, 1);
    t.is(s.made[0].token, TOKEN, 'the CSR was sent with the bootstrap token');
    const csr = s.client.callsOf('create', 'certificatesigningrequests')[0].body as { spec: Record<string, unknown> };
    t.is(csr.spec['signerName'], 'svc.io/kube-apiserver-client-kubelet');
    t.true(lstatSync(s.deps.store.currentPath).isSymbolicLink());
    t.is(statSync(s.deps.store.currentPath).mode & 0o777, 0o600);
    t.false(existsSync(s.deps.store.pendingKeyPath), 'the pending key is removed once stored');
    t.is(statSync(s.deps.kubeconfigPath).mode & 0o777, 0o600);
    const kc = readFileSync(s.deps.kubeconfigPath, 'utf8');
    t.true(kc.includes(`client-certificate: ${s.deps.store.currentPath}`));
    t.true(kc.includes(`client-key: ${s.deps.store.currentPath}`));
    t.is(id.config.server, 'https://127.0.0.1:6443');
    t.is(id.config.caPem, ca.certPem);
    t.is(id.config.token, undefined);
    t.regex(certificateInfo(id.config.certPem!).subject, /CN=system:node:worker-1/);
    t.is(clientCertProblem(id.config, Date.now()), undefined);

    // A restart uses the kubeconfig as it is.
    const again = await loadOrBootstrapIdentity(s.deps, new AbortController().signal);
    t.is(again.origin, 'kubeconfig');
    t.is(s.made.length, 1);
  } finally {
    s.cleanup();
  }
});

test('a valid stored certificate is reused without a new CSR when the kubeconfig is missing', async (t) => {
  const s = setup();
  try {
    await loadOrBootstrapIdentity(s.deps, new AbortController().signal);
    rmSync(s.deps.kubeconfigPath);
    const id = await loadOrBootstrapIdentity(s.deps, new AbortController().signal);
    t.is(id.origin, 'cert-store');
    t.is(s.client.callsOf('create').length, 1);
    t.true(existsSync(s.deps.kubeconfigPath));
  } finally {
    s.cleanup();
  }
});

test('a pending key from an interrupted bootstrap is reused', async (t) => {
  const s = setup();
  try {
    const pending = (await issue(ca, { commonName: 'x', usage: 'client', validityMs: 1000 })).keyPem;
    await s.deps.store.savePendingKey(pending);
    const id = await loadOrBootstrapIdentity(s.deps, new AbortController().signal);
    t.is(id.config.keyPem!.trim(), pending.trim());
    t.is(s.log.find('reusing the private key').length, 1);
  } finally {
    s.cleanup();
  }
});

test('an expired client certificate in --kubeconfig triggers a new bootstrap', async (t) => {
  const s = setup();
  try {
    const old = await issue(ca, { commonName: 'system:node:worker-1', usage: 'client', validityMs: 1000, now: new Date(Date.now() - 3600_000) });
    mkdirSync(join(s.dir, 'etc'));
    writeFileSync(s.deps.kubeconfigPath, renderAdminKubeconfig({ server: 'https://127.0.0.1:6443', caPem: ca.certPem, user: 'n', certPem: old.certPem, keyPem: old.keyPem }));
    const id = await loadOrBootstrapIdentity(s.deps, new AbortController().signal);
    t.is(id.origin, 'bootstrap');
    t.regex(String(s.log.find('not usable')[0].obj['problem']), /expired at/);
  } finally {
    s.cleanup();
  }
});

test('without a bootstrap kubeconfig a missing or expired kubeconfig is a clear error', async (t) => {
  const s = setup();
  try {
    const deps = { ...s.deps, bootstrapKubeconfigPath: '' };
    await t.throwsAsync(loadOrBootstrapIdentity(deps, new AbortController().signal), {
      instanceOf: BootstrapError,
      message: `kubeconfig ${s.deps.kubeconfigPath} does not exist and no --bootstrap-kubeconfig was given`,
    });
    const old = await issue(ca, { commonName: 'n', usage: 'client', validityMs: 1000, now: new Date(Date.now() - 3600_000) });
    mkdirSync(join(s.dir, 'etc'));
    writeFileSync(s.deps.kubeconfigPath, renderAdminKubeconfig({ server: 'https://h:1', caPem: ca.certPem, user: 'n', certPem: old.certPem, keyPem: old.keyPem }));
    await t.throwsAsync(loadOrBootstrapIdentity(deps, new AbortController().signal), { instanceOf: BootstrapError, message: /client certificate expired at .* and no --bootstrap-kubeconfig/ });
  } finally {
    s.cleanup();
  }
});

test('a denied CSR surfaces as CsrDeniedError and leaves no kubeconfig behind', async (t) => {
  const s = setup({ deny: true });
  try {
    await t.throwsAsync(loadOrBootstrapIdentity(s.deps, new AbortController().signal), { instanceOf: CsrDeniedError, message: /was denied \(reason NotAllowed\)/ });
    t.false(existsSync(s.deps.kubeconfigPath));
    t.false(existsSync(s.deps.store.currentPath));
  } finally {
    s.cleanup();
  }
});
