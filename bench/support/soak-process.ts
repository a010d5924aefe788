// What the soak benchmark reads about the daemon from outside: /proc (RSS, file descriptors,
// sockets, child processes), the control socket (RPCs and status), the home's disk by kind.
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";

export interface ProcSample {
  rssMb: number;
  /** RSS's parts: anonymous memory (heaps, malloc's arenas) and file-backed pages (code, mapped libraries). */
  anonMb: number;
  fileMb: number;
  fds: number;
  sockets: number;
  /** Direct children's pids. */
  children: number[];
}

/** One look at a live process; null once it is gone. */
export function sampleProcess(pid: number): ProcSample | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? "0") / 1024;
    const rssMb = kb("VmRSS");
    let fds = 0;
    let sockets = 0;
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      fds++;
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) sockets++;
      } catch {
        // closed between the listing and the look
      }
    }
    return { rssMb, anonMb: kb("RssAnon"), fileMb: kb("RssFile") + kb("RssShmem"), fds, sockets, children: childrenOf(pid) };
  } catch {
    return null;
  }
}

/** The pids whose parent is `pid` (from each task's children list in /proc, else a scan of /proc). */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) =>
      readFileSync(`/proc/${pid}/task/${t}/children`, "utf8")
        .split(/\s+/)
        .filter(Boolean)
        .map(Number),
    );
  } catch {
    const out: number[] = [];
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      try {
        // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) out.push(Number(name));
      } catch {
        // gone
      }
    }
    return out;
  }
}

export const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(safeRead(`/proc/${pid}/status`));
const safeRead = (p: string) => {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return "";
  }
};

/** The command line of a pid, for the report; "" once it is gone. */
export const commandOf = (pid: number): string => safeRead(`/proc/${pid}/cmdline`).split("\0").join(" ").trim();

/** One RPC over the control socket (JSON lines); rejects with the daemon's error or after `timeoutMs`. */
export function controlRpc(socketPath: string, method: string, params: unknown = {}, timeoutMs = 10_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const sock = connect(socketPath);
    let buf = "";
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`control ${method}: no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (fn: () => void) => {
      clearTimeout(timer);
      sock.destroy();
      fn();
    };
    sock.on("error", (err) => done(() => reject(err)));
    sock.on("connect", () => sock.write(`${JSON.stringify({ type: "rpc", id: "1", method, params })}\n`));
    sock.on("data", (d) => {
      buf += d.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const ev = JSON.parse(line) as { type: string; ok?: boolean; result?: unknown; error?: string; message?: string };
        if (ev.type === "rpc_result") return done(() => (ev.ok ? resolve(ev.result) : reject(new Error(ev.error))));
        if (ev.type === "error") return done(() => reject(new Error(ev.message)));
      }
    });
  });
}

/** The daemon's status over the control socket. */
export function controlStatus(socketPath: string, timeoutMs = 10_000): Promise<any> {
  return new Promise((resolve, reject) => {
    const sock = connect(socketPath);
    let buf = "";
    const timer = setTimeout(() => (sock.destroy(), reject(new Error("control status: no answer"))), timeoutMs);
    sock.on("error", (err) => (clearTimeout(timer), reject(err)));
    sock.on("connect", () => sock.write(`${JSON.stringify({ type: "status" })}\n`));
    sock.on("data", (d) => {
      buf += d.toString();
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      sock.destroy();
      const ev = JSON.parse(buf.slice(0, nl)) as { type: string; status?: unknown };
      if (ev.type === "status") resolve(ev.status);
      else reject(new Error(`control status: ${buf.slice(0, nl)}`));
    });
  });
}

/** Bytes under a path (a file or a folder, recursively); 0 when absent. */
export function bytesUnder(path: string): number {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of readdirSync(path)) total += bytesUnder(join(path, name));
  return total;
}

/** Least-squares slope of y over x. */
export function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export const median = (xs: number[]): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/**
 * GET with exactly these headers (fetch adds its own Sec-Fetch-Mode: cors, and the dashboard
 * takes a login only from a page opened as a page): status, body and the first cookie set.
 */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; cookie: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers: { host: u.host, ...headers } }, (res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, cookie: String(res.headers["set-cookie"] ?? "").split(";")[0]! }));
    });
    req.on("error", reject);
    req.end();
  });
}
