/**
 * Two connections joined byte for byte, both ways: the API server's upgrade proxy (client to
 * agent) and the agent's (client to the runtime's stream server).
 *
 * A side that ends cleanly (its FIN) is passed on as an end of the other, and the other is closed
 * only once its last bytes are written. Destroying it at once, as an abrupt close must, would drop
 * what Node still queues on it (a TLS socket always queues): upstream's UpgradeAwareHandler closes
 * both after one io.Copy returns, but a Go copy has handed every byte to the kernel by then. The
 * loss showed as kubectl 1.27 (SPDY) exec -it ending 0 with no output: the command's output, its
 * exit status and the GOAWAY were the bytes still queued. An error on either side, or cut(),
 * destroys both at once.
 */
import type { Duplex } from 'node:stream';

export interface JoinedSockets {
  /** Resolves once both sides are closed. */
  readonly closed: Promise<void>;
  /** Destroys both sides now (idle timeout, shutdown). */
  cut(): void;
}

function noDelay(s: Duplex): void {
  (s as Duplex & { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
}

export function joinSockets(a: Duplex, b: Duplex): JoinedSockets {
  const cut = (): void => {
    a.destroy();
    b.destroy();
  };
  // A relay passes each piece on as it comes. Under Nagle's algorithm a small piece waits for the
  // previous one's ACK, which the peer delays by 40 ms: a SPDY client (kubectl) writes one frame in
  // several pieces and waits for the answer, so every stream it opened cost 40 ms.
  noDelay(a);
  noDelay(b);
  a.pipe(b);
  b.pipe(a);
  const onClose = (other: Duplex) => () => {
    // Ended cleanly: pipe() has ended `other`; it closes once that end is written.
    if (other.destroyed) return;
    if (!other.writableEnded) cut();
    else if (other.writableFinished) other.destroy();
    else other.once('finish', () => other.destroy());
  };
  a.once('close', onClose(b));
  b.once('close', onClose(a));
  a.on('error', cut);
  b.on('error', cut);
  const closed = (s: Duplex): Promise<void> => new Promise((resolve) => (s.closed ? resolve() : s.once('close', () => resolve())));
  return { closed: Promise.all([closed(a), closed(b)]).then(() => undefined), cut };
}
