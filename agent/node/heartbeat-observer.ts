/** Where the heartbeat loops report each attempt's outcome (the agent's /metrics counts them). */
export interface HeartbeatObserver {
  /** One attempt of the Lease renewal ("lease") or the node status sync ("status") finished; ok when it succeeded. Must not throw. */
  heartbeat(kind: 'lease' | 'status', ok: boolean): void;
}
