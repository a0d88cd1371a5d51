/**
 * The TLS options of the API server's port: its serving pair, a client certificate asked for but
 * not required (clients without one may still use tokens or be anonymous), TLS 1.2 or later, Go's
 * cipher preference (common/tls-ciphers.ts).
 * Two choices differ from upstream's Go server, both for what each new connection costs (kubectl
 * opens one per command):
 * - No `ca`. The chain of a client certificate is verified only by the authenticators
 *   (authn/cert-chain.ts, against --client-ca-file and the request-header CA). Go's server names
 *   the client CAs in its CertificateRequest, but Node cannot give OpenSSL those names without
 *   also having it verify every client chain a second time and send the CA after the serving
 *   certificate (its automatic chain): about 0.25 ms of CPU per handshake between the two sides.
 *   Clients send their certificate either way (Go, OpenSSL and Java choose any when no names are
 *   given).
 * - SSL_OP_NO_TICKET. Stock clients never resume a session: client-go sets no session cache,
 *   @kubernetes/client-node makes a new https.Agent per request, and the Python and Ruby clients a
 *   new connection object per request. Under TLS 1.3 OpenSSL still sends its two tickets after a
 *   full handshake, but stateful ones (a session ID instead of the encrypted session), and Node
 *   keeps no server-side session cache (no 'newSession' listener), so none ever resumes; Node
 *   cannot set the number of tickets to 0 (SSL_CTX_set_num_tickets). What the option saves is the
 *   sealing of the session into each ticket: about 0.3 ms of server CPU per new connection (a
 *   loop of handshakes with a client certificate, server in its own process: 870-911 µs with the
 *   option against 1196-1240 µs without). Go sends one stateless ticket.
 */
import { constants } from 'node:crypto';
import type { ServerOptions } from 'node:https';
import { serverCipherPreference } from '../../common/tls-ciphers';

export function servingTlsOptions(tls: { certPem: string; keyPem: string }): ServerOptions {
  return {
    cert: tls.certPem,
    key: tls.keyPem,
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
    secureOptions: constants.SSL_OP_NO_TICKET,
    ...serverCipherPreference,
  };
}
