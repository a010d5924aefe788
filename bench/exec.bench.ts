// Exec round trip (issue 13): the `exec` tool running `true`, from the call to its result, with
// the bubblewrap sandbox and without it. Without bwrap on this machine, only the unsandboxed row.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand, UNSANDBOXED } from "../src/agent/tools/exec.ts";
import { probeBwrap, resolveExecSandbox, type ExecSandbox } from "../src/agent/tools/sandbox.ts";
import { measure, percentile, round, type Figure } from "./harness.ts";

const ITERATIONS = 40;

async function roundTrip(sandbox: ExecSandbox, workspace: string): Promise<number[]> {
  const signal = new AbortController().signal;
  const once = async () => {
    const out = await runCommand({ command: "true", cwd: workspace, timeoutMs: 10_000, signal, sandbox });
    if (out.content !== "[exit code 0]") throw new Error(`exec bench: unexpected result ${out.content}`);
  };
  await once(); // warm-up
  return measure(ITERATIONS, once);
}

export async function execBench(): Promise<Figure[]> {
  const home = mkdtempSync(join(tmpdir(), "hearth-bench-exec-"));
  const workspace = join(home, "workspace");
  mkdirSync(workspace);
  try {
    const figures: Figure[] = [];
    const plain = await roundTrip(UNSANDBOXED, workspace);
    figures.push({ name: "exec `true` round trip, no sandbox (p50)", value: round(percentile(plain, 50), 1), unit: "ms", target: 50 });
    if (probeBwrap().ok) {
      const sandbox = resolveExecSandbox({ mode: "bwrap", network: true, home, workspace });
      const boxed = await roundTrip(sandbox, workspace);
      figures.push({ name: "exec `true` round trip, bubblewrap (p50)", value: round(percentile(boxed, 50), 1), unit: "ms", target: 75 });
      figures.push({ name: "exec `true` round trip, bubblewrap (p95)", value: round(percentile(boxed, 95), 1), unit: "ms", target: 150 });
    } else {
      process.stderr.write("exec bench: bubblewrap is not installed; only the unsandboxed figure\n");
    }
    return figures;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
