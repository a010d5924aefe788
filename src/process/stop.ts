// Stop requests for the daemon's process: SIGTERM, SIGINT, SIGHUP, and the end of the launcher
// that started it (bin/hearth.js on an older Node). They are caught from the first line the
// process runs and never uncaught again: Node drops a signal that arrived while a handler was
// being swapped (removing the last listener closes the signal's handle, and a signal still
// waiting in it is lost), which lost a SIGTERM sent the moment the daemon became ready.
// A request made before anyone listens is kept and handed to the first listener.

export type StopReason =
  | { kind: "signal"; signal: "SIGTERM" | "SIGINT" | "SIGHUP" }
  /** The launcher that spawned this process is gone (its IPC channel closed). */
  | { kind: "launcher_gone" };

export interface StopRequests {
  /** The first stop asked for, or null while none was. */
  readonly first: StopReason | null;
  /**
   * Calls `listener` with each stop request from now on, and at once with each one made
   * before (in order). The listener must not throw. Returns a function that removes it.
   */
  onStop(listener: (reason: StopReason, count: number) => void): () => void;
}

/** Set by bin/hearth.js in the environment of the Node it spawns. */
export const LAUNCHER_ENV = "HEARTH_LAUNCHED_BY";

let installed: StopRequests | null = null;

/**
 * Catches the stop signals for the rest of the process's life (idempotent). Only `hearth start`
 * calls it: the other commands keep Node's defaults or handle Ctrl+C themselves.
 */
export function catchStopRequests(proc: NodeJS.Process = process): StopRequests {
  if (installed) return installed;
  const made: StopReason[] = [];
  const listeners = new Set<(reason: StopReason, count: number) => void>();
  const request = (reason: StopReason) => {
    made.push(reason);
    for (const l of listeners) l(reason, made.length);
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) proc.on(signal, () => request({ kind: "signal", signal }));
  // Under the launcher, this process must not outlive it (a kill -9 of the launcher included):
  // its IPC channel closing is the one sign that always comes.
  if (launchedByLauncher(proc)) watchLauncher(proc, () => request({ kind: "launcher_gone" }));
  installed = {
    get first() {
      return made[0] ?? null;
    },
    onStop(listener) {
      listeners.add(listener);
      made.forEach((reason, i) => listener(reason, i + 1));
      return () => listeners.delete(listener);
    },
  };
  return installed;
}

/**
 * Whether bin/hearth.js spawned this process. Read once: the variable is removed so that
 * processes this one starts (commands, MCP servers) do not take themselves for its child.
 */
export function launchedByLauncher(proc: NodeJS.Process = process): boolean {
  const launched = proc.env[LAUNCHER_ENV] !== undefined;
  delete proc.env[LAUNCHER_ENV];
  return launched;
}

/**
 * Under the launcher: tells it that signals are now handled (it holds back a signal until then,
 * so none lands while Node is still booting), and reports the channel's end. The channel is
 * unref'd: it must not keep a finished command alive.
 */
export function watchLauncher(proc: NodeJS.Process, onGone: () => void): void {
  if (!proc.connected) {
    // The launcher died while this process was still booting.
    onGone();
    return;
  }
  proc.once("disconnect", onGone);
  // A launcher that died a moment ago makes this fail (EPIPE): the disconnect follows.
  proc.send?.({ hearth: "signals-caught" }, undefined, {}, () => {});
  (proc.channel as { unref?: () => void } | undefined)?.unref?.();
}

/** The log fields that say why the process stops. */
export function describeStop(reason: StopReason): Record<string, string> {
  switch (reason.kind) {
    case "signal":
      return { signal: reason.signal };
    case "launcher_gone":
      return { reason: "the launcher that started it is gone" };
    default:
      reason satisfies never;
      return {};
  }
}
