// A backup made without --include-secrets holds no secret, whatever field holds it: the home's
// config sets every field the schema marks as a secret (src/fields/secret-fields.ts), so a new secret
// field is covered the day it is marked; files the owner placed in the home are judged by their
// bytes (a private key, a hand copy of the config). The archive is searched as bytes.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBackup } from "../../src/backup/archive.ts";
import { configSchema } from "../../src/config/schema.ts";
import { ANY, secretFields } from "../../src/fields/secret-fields.ts";
import { CRYPTO_STORE_FILE } from "../../src/channels/matrix/crypto-store.ts";

let dir: string;
let home: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-bks-"));
  home = join(dir, "home");
  mkdirSync(home, { mode: 0o700 });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n";

/** A config.json that sets every marked field (each `*` a name of its own), and the values it set. */
function everySecretField(): { config: Record<string, unknown>; values: string[]; paths: string[] } {
  const config: Record<string, unknown> = {};
  const values: string[] = [];
  const paths: string[] = [];
  secretFields(configSchema).forEach((field, i) => {
    const path = field.path.map((step) => (step === ANY ? `name${i}` : step));
    const value = `secret-${i}-${"x".repeat(12)}`;
    values.push(value);
    let node = config;
    for (const step of path.slice(0, -1)) node = (node[step] ??= {}) as Record<string, unknown>;
    if (field.mark.secret === "map") {
      node[path.at(-1)!] = { "X-Api-Token": value };
      paths.push([...path, "X-Api-Token"].join("."));
    } else {
      node[path.at(-1)!] = value;
      paths.push(path.join("."));
    }
  });
  return { config, values, paths };
}

describe("a backup without secrets", () => {
  it("blanks every field the schema marks as a secret, and leaves out a private key and a hand copy of the config: none of the values is anywhere in the archive", async () => {
    const { config, values, paths } = everySecretField();
    // The marks the issue named are among them (each found through the schema, not listed here).
    for (const wanted of [/^mcp\.servers\.name\d+\.auth\.clientSecret$/, /^mcp\.servers\.name\d+\.auth\.privateKeyJwt\.privateKey$/, /^providers\.name\d+\.apiKey$/]) expect(paths.some((p) => wanted.test(p)), String(wanted)).toBe(true);
    const text = JSON.stringify({ ...config, tools: { ...(config.tools as object), exec: { hosts: { box: { type: "ssh", host: "127.0.0.1", user: "me", identityFile: join(home, "ssh", "id_ed25519") }, odd: { type: "ssh", host: "127.0.0.2", user: "me", identityFile: "ssh/odd-key" } } } } }, null, 2);
    writeFileSync(join(home, "config.json"), text, { mode: 0o600 });
    writeFileSync(join(home, "config.json.bak"), text, { mode: 0o600 });
    writeFileSync(join(home, ".env"), "ANTHROPIC_API_KEY=sk-ant-from-the-env-file\n", { mode: 0o600 });
    mkdirSync(join(home, "ssh"), { mode: 0o700 });
    writeFileSync(join(home, "ssh", "id_ed25519"), PRIVATE_KEY, { mode: 0o600 });
    // A key in a format the scan would not recognise, named by a host: left out by its name.
    writeFileSync(join(home, "ssh", "odd-key"), "opaque key material\n", { mode: 0o600 });
    mkdirSync(join(home, "workspace"));
    writeFileSync(join(home, "workspace", "MEMORY.md"), "The cat is called Pixel.\n");
    writeFileSync(join(home, "workspace", "pasted.md"), "my key: sk-ant-from-the-env-file\n");
    // The Matrix device's private keys (its crypto store), named as a secrets file.
    writeFileSync(join(home, CRYPTO_STORE_FILE), `{"format":1,"databases":["matrix-device-private-key"]}`, { mode: 0o600 });

    const made = await createBackup({ home, out: join(dir, "b.tar.gz"), includeSecrets: false, backupDirs: [], hearth: "test" });
    expect(made.redacted.sort()).toEqual([...paths].sort());
    expect(made.left).toEqual([
      { path: ".env", reason: "secret" },
      { path: "config.json.bak", reason: "secret" },
      { path: CRYPTO_STORE_FILE, reason: "secret" },
      { path: "ssh/id_ed25519", reason: "secret" },
      { path: "ssh/odd-key", reason: "secret" },
      { path: "workspace/pasted.md", reason: "secret" },
    ]);
    const archive = gunzipSync(readFileSync(made.file));
    for (const v of [...values, "sk-ant-from-the-env-file", "BEGIN OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU", "opaque key material", "matrix-device-private-key"]) expect(archive.includes(Buffer.from(v)), v).toBe(false);
    expect(archive.includes(Buffer.from("The cat is called Pixel."))).toBe(true);
  });

  it("--include-secrets keeps them all", async () => {
    writeFileSync(join(home, "config.json"), `{ "model": { "apiKey": "sk-ant-in-the-config" } }`, { mode: 0o600 });
    mkdirSync(join(home, "ssh"), { mode: 0o700 });
    writeFileSync(join(home, "ssh", "id_ed25519"), PRIVATE_KEY, { mode: 0o600 });
    const made = await createBackup({ home, out: join(dir, "b.tar.gz"), includeSecrets: true, backupDirs: [], hearth: "test" });
    expect(made.left).toEqual([]);
    const archive = gunzipSync(readFileSync(made.file));
    for (const v of ["sk-ant-in-the-config", "BEGIN OPENSSH PRIVATE KEY"]) expect(archive.includes(Buffer.from(v)), v).toBe(true);
  });
});
