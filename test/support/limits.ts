// How long e2e tests wait for what must happen. A limit is how long a test may take to FAIL, not
// how long it takes to pass (every wait ends as soon as its condition holds), so it is sized for
// a loaded machine: two cores, other test processes and busy loops beside the daemon, where a
// daemon start that takes 1 s of CPU can take 15 s of wall time.
export const E2E_WAIT_MS = 90_000;

/** A wait's limit: what the caller asked for, never less than E2E_WAIT_MS. */
export function e2eLimit(requestedMs?: number): number {
  return Math.max(requestedMs ?? 0, E2E_WAIT_MS);
}
