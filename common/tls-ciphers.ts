/**
 * The cipher preference of svc's TLS servers (svc-apiserver's port, svc-node's), as upstream's
 * kube-apiserver and kubelet choose through Go's crypto/tls on a CPU with AES instructions: the
 * server's order decides, and for TLS 1.3 that order is AES-128-GCM, AES-256-GCM, then
 * ChaCha20-Poly1305. OpenSSL's default (Node's) puts AES-256-GCM first. What AES-128-GCM with
 * SHA-256 saves here: a loop of handshakes with a client certificate, server in a process of its
 * own, cost about 5% less CPU on each side than AES-256-GCM with SHA-384 (the handshake's hashes
 * are SHA-256 instead of SHA-384), and each byte of a stream is cheaper to seal and open. Machines
 * without AES instructions, where Go puts ChaCha20 first, are not told apart here.
 * The TLS 1.2 suites are Node's defaults, in Node's order.
 */
import { DEFAULT_CIPHERS } from 'node:tls';

const TLS13_GO_ORDER = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];

/** Options of a TLS server (tls, https and http2 createServer) for the preference above. */
export const serverCipherPreference = {
  ciphers: [...TLS13_GO_ORDER, ...DEFAULT_CIPHERS.split(':').filter((c) => !c.startsWith('TLS_'))].join(':'),
  honorCipherOrder: true,
} as const;
