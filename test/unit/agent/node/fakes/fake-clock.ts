/** The agent's tests use the shared fake clock (test/helpers/fake-clock.ts); this path stays for their imports. */
export { FakeClock, flush } from '../../../../helpers/fake-clock';
