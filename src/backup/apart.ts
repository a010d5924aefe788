// A scheduled backup made in a process of its own. Reading the home file by file, copying its
// databases and gzipping the archive takes tens of megabytes of native memory (zlib's buffers,
// SQLite's pages) that the allocator keeps once the daemon has touched them: the week-long soak
// saw the daemon's RSS step up by ~19 MB at its first backup and never come down. In a child,
// that memory ends with the child. `hearth backup create` runs in its own process already.
import { fork } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createBackup, type CreateOptions, type Created } from "./archive.ts";

type Request = Omit<CreateOptions, "now"> & { now: string };
type Answer = { ok: true; created: Created; pid: number } | { ok: false; error: string };

/** createBackup in a child process; rejects with the child's error (or how it ended). Resolves with what it made and the child's pid. */
export function createBackupApart(opts: CreateOptions & { now: Date }): Promise<Created & { pid: number }> {
  // The daemon's own flags (type stripping, a test's preload), never a debugger's port.
  const execArgv = process.execArgv.filter((a) => !a.startsWith("--inspect"));
  const child = fork(fileURLToPath(import.meta.url), [], { execArgv, stdio: ["ignore", "ignore", "pipe", "ipc"], serialization: "json" });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    let answer: Answer | undefined;
    child.on("message", (m: Answer) => (answer = m));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (answer?.ok) resolve({ ...answer.created, pid: answer.pid });
      else reject(new Error(answer && !answer.ok ? answer.error : `the backup process ended (${signal ?? `exit ${code}`})${stderr.trim() ? `: ${stderr.trim().split("\n").at(-1)}` : ""}`));
    });
    child.send({ ...opts, now: opts.now.toISOString() } satisfies Request);
  });
}

// The child: one request, one answer, then exit.
if (process.send && process.argv[1] === fileURLToPath(import.meta.url)) {
  let out: string | undefined;
  // The daemon went away (killed): no one wants the archive; leave nothing half-made behind.
  process.once("disconnect", () => {
    if (out) for (const part of [`${out}.staging-${process.pid}`, `${out}.tmp-${process.pid}`]) rmSync(part, { recursive: true, force: true });
    process.exit(1);
  });
  process.once("message", (req: Request) => {
    out = path.resolve(req.out);
    createBackup({ ...req, now: new Date(req.now) }).then(
      (created) => process.send!({ ok: true, created, pid: process.pid } satisfies Answer, () => process.exit(0)),
      (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.message : String(err) } satisfies Answer, () => process.exit(0)),
    );
  });
}
