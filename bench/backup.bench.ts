// Hostile backups: `hearth backup verify` and `restore` of a 20 MB gzip bomb (~21 GiB of zeros),
// each run as a child process whose peak RSS (VmHWM) is its own. Both must refuse it under 256 MB.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { round, type Figure } from "./harness.ts";
import { runMeasured, writeGzipBomb } from "./support/gzip-bomb.ts";

export async function backupBench(): Promise<Figure[]> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-bomb-"));
  const root = fileURLToPath(new URL("../", import.meta.url));
  const bin = join(root, "bin", "hearth.js");
  try {
    const bomb = join(dir, "bomb.tar.gz");
    writeGzipBomb(bomb, 20);
    const env = { ...process.env, HEARTH_HOME: join(dir, "home") };
    const figures: Figure[] = [];
    for (const [what, args] of [
      ["verify", ["backup", "verify", bomb]],
      ["restore", ["backup", "restore", bomb, "--home", join(dir, "restored")]],
    ] as const) {
      const start = performance.now();
      const r = await runMeasured([bin, ...args], env, root);
      if (r.code !== 1) throw new Error(`backup ${what} of the bomb exited ${r.code}, not 1 (refused): ${r.stdout}${r.stderr}`);
      figures.push({ name: `backup bomb: ${what} of a 20 MB gzip bomb, peak RSS`, value: round(r.peakMb, 0), unit: "MB", target: 256 });
      figures.push({ name: `backup bomb: ${what}, time to refuse`, value: round(performance.now() - start, 0), unit: "ms", target: 10_000 });
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
