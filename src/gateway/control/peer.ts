// Who is at the other end of a control-socket connection: the kernel's socket table (read with
// `ss` from iproute2, which asks it over netlink — Node has no SO_PEERCRED) names the process
// holding the client's end. A request that answers an approval or hands out the owner's powers is
// refused when that process is a command Hearth started, or descends from one: every such process
// carries HEARTH_EXEC_ID in its environment (agent/tools/exec-marker.ts), and so does its session
// leader. In the sandbox a command cannot reach the socket at all (the home is hidden); this
// check is what stands when commands run unconfined. Its limit is the marker's: a process that
// clears its environment, leaves its session and is orphaned is not recognised.
import { execFile } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import type { Socket } from "node:net";
import { EXEC_MARKER_VAR } from "../../agent/tools/exec-marker.ts";

/** The pids holding the other end of `socket` (a Unix socket this process accepted); null when they cannot be told. */
export async function peerPids(socket: Socket): Promise<number[] | null> {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== "number" || fd < 0) return null;
  let inode: string;
  try {
    inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1] ?? "";
  } catch {
    return null;
  }
  if (!inode) return null;
  const table = await new Promise<string | null>((resolve) =>
    execFile("ss", ["-xpnH"], { timeout: 5_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => resolve(err ? null : stdout)),
  );
  if (table === null) return null;
  const rows = table.split("\n").map((l) => l.trim().split(/\s+/));
  // u_str ESTAB 0 0 <local address> <local inode> <peer address> <peer inode> users:((…))
  const ours = rows.find((r) => r[5] === inode);
  const peer = ours ? rows.find((r) => r[5] === ours[7] && r[7] === inode) : undefined;
  if (!peer) return null;
  return [...peer.slice(8).join(" ").matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
}

/** Whether `pid`, one of its ancestors or its session's leader carries the marker of this home's commands. */
export function startedByHearth(pid: number, markerPrefix: string): boolean {
  const needle = `${EXEC_MARKER_VAR}=${markerPrefix}.`;
  const marked = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/environ`, "latin1").split("\0").some((e) => e.startsWith(needle));
    } catch {
      return false;
    }
  };
  const stat = (p: number): { ppid: number; sid: number } | null => {
    try {
      const s = readFileSync(`/proc/${p}/stat`, "latin1");
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      return { ppid: Number(f[1]), sid: Number(f[3]) };
    } catch {
      return null;
    }
  };
  const first = stat(pid);
  if (first && first.sid > 1 && marked(first.sid)) return true;
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    if (marked(p)) return true;
    const s = stat(p);
    if (!s) return false;
    p = s.ppid;
  }
  return false;
}

/**
 * Null when the peer of `socket` may answer approvals and hand out the owner's powers; else the
 * refusal it is sent. Fails closed: a peer that cannot be told is refused, with what to do instead.
 */
export async function refusePeer(socket: Socket, markerPrefix: string): Promise<string | null> {
  const pids = await peerPids(socket);
  if (pids === null || pids.length === 0) {
    return "Hearth cannot tell which process is asking (the ss command of iproute2 is needed), so it does not take this over the control socket: answer in the chat or on the dashboard.";
  }
  if (pids.some((p) => startedByHearth(p, markerPrefix))) return "Refused: this request comes from a command Hearth started; only the owner answers approvals.";
  return null;
}
