// `hearth grants`: the grants in force, numbered as `grants revoke N` takes them, and usage errors.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UsageError } from "../../src/cli/args.ts";
import { parseGrants, runGrants } from "../../src/cli/grants.ts";
import { NewerStateError } from "../../src/state/versions.ts";

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hearth-grants-"));
  writeFileSync(join(home, "config.json"), JSON.stringify({ timezone: "UTC" }));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function run(args: string[]) {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = "";
  let stderr = "";
  out.on("data", (d: Buffer) => (stdout += d.toString()));
  err.on("data", (d: Buffer) => (stderr += d.toString()));
  const code = runGrants(home, args, { stdout: out, stderr: err });
  return { code, stdout, stderr };
}

describe("hearth grants", () => {
  it("lists the grants in force, numbered; an expired one is left out; revoke N removes that one", () => {
    const at = Date.parse("2026-11-25T10:00:00Z");
    const grant = (kind: string, pattern: string, expiresAt: number | null, chat = "telegram:100") => ({ tool: "exec", kind, pattern, folder: "/w", chat, host: null, expiresAt, by: "Ann", at });
    writeFileSync(join(home, "grants.json"), JSON.stringify({ version: 2, grants: [grant("command", "old", Date.now() - 1000), grant("command", "git push origin main", Date.now() + 20 * 60_000 - 1000), grant("pattern", "make *", null, "session:cron:nightly")] }));
    expect(run([])).toEqual({
      code: 0,
      stderr: "",
      stdout: "1. git push origin main in /w (chat telegram:100) — 20 more min (by Ann, 25/11/2026, 10:00)\n2. make * (your pattern) in /w (session cron:nightly) — always (by Ann, 25/11/2026, 10:00)\n",
    });
    expect(run(["revoke", "1"])).toEqual({ code: 0, stderr: "", stdout: "Revoked: git push origin main in /w (chat telegram:100).\n" });
    expect(run([]).stdout).toBe("1. make * (your pattern) in /w (session cron:nightly) — always (by Ann, 25/11/2026, 10:00)\n");
    expect(run(["revoke", "5"])).toEqual({ code: 1, stdout: "", stderr: "hearth: there is no grant 5; `grants` lists them with their numbers.\n" });
    expect(run(["--log"]).stdout).toBe("No approval decisions yet.\n");
  });

  it("grants.json carries a version: an older file is migrated (the old one kept) and its grants, made before grants were per chat and per command, are dropped; one from a newer Hearth is refused and left as it is", () => {
    const at = Date.parse("2026-11-25T10:00:00Z");
    const old = JSON.stringify({ grants: [{ tool: "exec", pattern: "make *", folder: "/w", host: null, expiresAt: null, by: "Ann", at }] });
    writeFileSync(join(home, "grants.json"), old);
    expect(run([]).stdout).toBe("No grants.\n");
    expect(JSON.parse(readFileSync(join(home, "grants.json"), "utf8"))).toEqual({ version: 3, grants: [] });
    expect(readFileSync(join(home, "grants.json.v0.bak"), "utf8")).toBe(old);
    const newer = JSON.stringify({ version: 4, grants: [] });
    writeFileSync(join(home, "grants.json"), newer);
    expect(() => run([])).toThrow(NewerStateError);
    expect(readFileSync(join(home, "grants.json"), "utf8")).toBe(newer);
  });

  it("version 2's connection grants were pressed under a question that said '(any port)': they become host-wide grants and are listed in those words; command grants stay as they were", () => {
    const at = Date.parse("2026-11-25T10:00:00Z");
    const v2 = JSON.stringify({
      version: 2,
      grants: [
        { tool: "connect", kind: "command", pattern: "paste.example", folder: "telegram:100", chat: "telegram:100", host: "paste.example", expiresAt: null, by: "Ann", at },
        { tool: "exec", kind: "command", pattern: "make deploy", folder: "/w", chat: "telegram:100", host: null, expiresAt: null, by: "Ann", at },
      ],
    });
    writeFileSync(join(home, "grants.json"), v2);
    expect(run([]).stdout).toBe(
      "1. any command or fetch → paste.example, any port (chat telegram:100) — always (by Ann, 25/11/2026, 10:00)\n2. make deploy in /w (chat telegram:100) — always (by Ann, 25/11/2026, 10:00)\n",
    );
    expect(JSON.parse(readFileSync(join(home, "grants.json"), "utf8")).grants.map((g: { kind: string; port: unknown }) => [g.kind, g.port])).toEqual([["host", null], ["command", null]]);
    expect(readFileSync(join(home, "grants.json.v2.bak"), "utf8")).toBe(v2);
  });

  it("a connection grant is listed by what it covers: the exact call from its folder to host:port, any command or fetch to host:port, or the whole host", () => {
    const at = Date.parse("2026-11-25T10:00:00Z");
    const connect = (kind: string, pattern: string, folder: string, host: string, port: number | null) => ({ tool: "connect", kind, pattern, folder, chat: "telegram:100", host, port, expiresAt: null, by: "Ann", at });
    writeFileSync(
      join(home, "grants.json"),
      JSON.stringify({
        version: 3,
        grants: [
          connect("command", "exec: curl -s --data-binary @MEMORY.md http://10.0.0.5:8080/g1", "/w", "10.0.0.5", 8080),
          connect("command", "web_fetch https://status.example/ping", "telegram:100", "status.example", 443),
          connect("destination", "status.example:443", "telegram:100", "status.example", 443),
          connect("host", "::1", "telegram:100", "::1", null),
          connect("destination", "[::1]:8443", "telegram:100", "::1", 8443),
        ],
      }),
    );
    expect(run([]).stdout.split("\n").map((l) => l.replace(/ — always \(by Ann, .+\)$/, ""))).toEqual([
      "1. exec: curl -s --data-binary @MEMORY.md http://10.0.0.5:8080/g1 in /w → 10.0.0.5:8080 (chat telegram:100)",
      "2. web_fetch https://status.example/ping → status.example:443 (chat telegram:100)",
      "3. any command or fetch → status.example:443 (chat telegram:100)",
      "4. any command or fetch → ::1, any port (chat telegram:100)",
      "5. any command or fetch → [::1]:8443 (chat telegram:100)",
      "",
    ]);
  });

  it("refuses a revoke without a number and an unknown action", () => {
    expect(() => parseGrants(["revoke"])).toThrow(UsageError);
    expect(() => parseGrants(["revoke", "x"])).toThrow(UsageError);
    expect(() => parseGrants(["drop"])).toThrow(UsageError);
    expect(parseGrants(["--log"])).toEqual({ action: "log" });
  });
});
