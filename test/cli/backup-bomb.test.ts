// A hostile archive costs bounded memory: `hearth backup verify` and `restore` of a 20 MB gzip
// bomb (about 21 GiB of zeros) run as child processes whose peak RSS is read as they exit; both
// refuse it with one sentence, and the current home is byte for byte as it was.
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMeasured, writeGzipBomb } from "../../bench/support/gzip-bomb.ts";
import { hearthBin, isolatedEnv, repoRoot } from "../support/cli-process.ts";

let dir: string;
let bomb: string;
let home: string;
const REFUSAL = /^ {2}refused: it expands more than 200× \(\d+\.\d kiB gave \d+\.\d MiB so far\); a Hearth backup does not, this looks like a decompression bomb\n$/;

/** Every path under `root` with its kind and, for a file, its mode and the sha256 of its bytes. */
function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (abs: string, rel: string) => {
    const st = lstatSync(abs);
    if (st.isDirectory()) {
      out[rel || "."] = `dir ${(st.mode & 0o777).toString(8)}`;
      for (const n of readdirSync(abs)) walk(join(abs, n), rel ? `${rel}/${n}` : n);
    } else out[rel] = `file ${(st.mode & 0o777).toString(8)} ${createHash("sha256").update(readFileSync(abs)).digest("hex")}`;
  };
  walk(root, "");
  return out;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-bomb-"));
  bomb = join(dir, "bomb.tar.gz");
  expect(writeGzipBomb(bomb, 20)).toBeGreaterThan(20 * 1024 * 1024);
  home = join(dir, "home");
  mkdirSync(join(home, "workspace"), { recursive: true, mode: 0o700 });
  writeFileSync(join(home, "config.json"), `{ "version": 2 }\n`, { mode: 0o600 });
  writeFileSync(join(home, "workspace", "MEMORY.md"), "The cat is called Pixel.\n", { mode: 0o600 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hearth = (...args: string[]) => runMeasured([hearthBin, ...args], isolatedEnv({ HEARTH_HOME: home }), repoRoot);

describe("a gzip bomb", () => {
  it("verify refuses it with one sentence, under 256 MB of peak RSS", async () => {
    const r = await hearth("backup", "verify", bomb);
    expect(r.code).toBe(1);
    expect(r.stdout.split("\n")[0]).toBe(`FAILED: ${bomb}`);
    expect(r.stdout.slice(`FAILED: ${bomb}\n`.length)).toMatch(REFUSAL);
    expect(r.peakMb).toBeLessThan(256);
  });

  it("restore over the home (--force) refuses it, under 256 MB of peak RSS, and the home is byte for byte as it was", async () => {
    const before = tree(home);
    const r = await hearth("backup", "restore", bomb, "--force");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const [first, ...rest] = r.stderr.split("\n");
    expect(first).toBe(`hearth: not restored, nothing was changed: ${bomb} failed verification:`);
    expect(`${rest.join("\n")}`).toMatch(REFUSAL);
    expect(r.peakMb).toBeLessThan(256);
    expect(tree(home)).toEqual(before);
    // Nothing was left beside it either.
    expect(readdirSync(dirname(home)).sort()).toEqual(["bomb.tar.gz", "home"]);
  });
});
