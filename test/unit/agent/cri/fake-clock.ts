/** The CRI tests' clock: the shared fake clock (test/helpers/fake-clock.ts), starting where these tests always started. */
import { FakeClock as SharedFakeClock, flush } from '../../../helpers/fake-clock';

export class FakeClock extends SharedFakeClock {
  constructor(start = 1_700_000_000_000) {
    super(start);
  }
}

/** Lets pending promise continuations (and I/O callbacks already queued) run. */
export function settle(): Promise<void> {
  return flush(5);
}
