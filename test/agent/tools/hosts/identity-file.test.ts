// An SSH identityFile others may read is refused as OpenSSH refuses it, before any connection is
// made (the port below has nothing listening: a refusal that tried to connect would say so).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectHost } from "../../../../src/agent/tools/hosts/connect.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "hearth-identity-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n-----END OPENSSH PRIVATE KEY-----\n";

describe("an SSH identityFile", () => {
  for (const mode of [0o644, 0o640, 0o604]) {
    it(`at mode ${mode.toString(8)} is refused with OpenSSH's reason`, async () => {
      const file = path.join(dir, "id_ed25519");
      writeFileSync(file, KEY);
      chmodSync(file, mode);
      const octal = mode.toString(8).padStart(4, "0");
      await expect(connectHost("nas", { type: "ssh", host: "127.0.0.1", port: 9, user: "me", identityFile: file, env: {} }, { defaultKnownHostsFile: path.join(dir, "known_hosts") })).rejects.toThrow(
        `Could not use the identityFile of nas: UNPROTECTED PRIVATE KEY FILE! Permissions ${octal} for '${file}' are too open. It is required that your private key files are NOT accessible by others; run chmod 600 '${file}'.`,
      );
    });
  }
});
