/** Renders the kubeconfig the agent writes after TLS bootstrap, in the kubelet's shape (default-cluster / default-auth / default-context). */
import YAML from 'yaml';

export interface KubeconfigContent {
  server: string;
  /** CA bundle (embedded as certificate-authority-data); omit to use system roots. */
  caPem?: string;
  insecureSkipTLSVerify?: boolean;
  tlsServerName?: string;
  /** File holding the client certificate (the -current.pem symlink, which also holds the key). */
  certFile: string;
  keyFile: string;
}

export function renderKubeconfig(c: KubeconfigContent): string {
  const cluster: Record<string, unknown> = { server: c.server };
  if (c.caPem) cluster['certificate-authority-data'] = Buffer.from(c.caPem).toString('base64');
  if (c.insecureSkipTLSVerify) cluster['insecure-skip-tls-verify'] = true;
  if (c.tlsServerName) cluster['tls-server-name'] = c.tlsServerName;
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster }],
    contexts: [{ name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } }],
    'current-context': 'default-context',
    users: [{ name: 'default-auth', user: { 'client-certificate': c.certFile, 'client-key': c.keyFile } }],
    preferences: {},
  });
}
