// known_hosts lookups and the remote command line, without a server.
import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkHostKey, hostKeyFromBlob, knownHostName } from "../../../../src/agent/tools/hosts/known-hosts.ts";
import { remoteCommandLine, shellQuote } from "../../../../src/agent/tools/hosts/ssh-hosts.ts";
import { parseConfig } from "../../../../src/config/config.ts";

const blob = (type: string, body: string) => {
  const t = Buffer.from(type);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(t.length);
  return Buffer.concat([len, t, Buffer.from(body)]);
};
const key = hostKeyFromBlob(blob("ssh-ed25519", "server-key"));
const other = hostKeyFromBlob(blob("ssh-ed25519", "someone-else"));
const line = (host: string, k = key) => `${host} ${k.type} ${k.blob.toString("base64")}`;

describe("known_hosts", () => {
  it("names a server off port 22 as [host]:port, like OpenSSH", () => {
    expect(knownHostName("nas.lan", 22)).toBe("nas.lan");
    expect(knownHostName("10.0.0.2", 2222)).toBe("[10.0.0.2]:2222");
  });

  it("knows a key from a plain or a hashed entry, and only for that host", () => {
    const salt = randomBytes(20);
    const hashed = `|1|${salt.toString("base64")}|${createHmac("sha1", salt).update("[nas]:2222").digest("base64")}`;
    expect(checkHostKey(line("other,[nas]:2222"), "[nas]:2222", key)).toEqual({ status: "known" });
    expect(checkHostKey(line(hashed), "[nas]:2222", key)).toEqual({ status: "known" });
    expect(checkHostKey(line(hashed), "nas", key)).toEqual({ status: "unknown" });
    expect(checkHostKey("# nas only\n", "nas", key)).toEqual({ status: "unknown" });
  });

  it("calls a different key for a known host changed, and a revoked one too", () => {
    expect(checkHostKey(line("nas", other), "nas", key)).toEqual({ status: "changed", known: [other] });
    expect(checkHostKey(`${line("nas")}\n@revoked ${line("nas")}`, "nas", key)).toEqual({ status: "changed", known: [key] });
  });

  it("prints fingerprints as ssh-keygen -l does (unpadded base64 of the SHA-256)", () => {
    expect(key.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
  });
});

describe("the remote command line", () => {
  it("quotes anything the model writes as one argument", () => {
    expect(shellQuote(`it's "$(rm -rf ~)"`)).toBe(`'it'\\''s "$(rm -rf ~)"'`);
    expect(remoteCommandLine("echo $HOME", { cwd: "/srv/a b", env: { A: "x'y" } })).toBe(
      `exec 3>&2 2>/dev/null; setsid bash -c 'printf '\\''%s\\n'\\'' "$$" >&2; export A='\\''x'\\''\\'\\'''\\''y'\\''; cd -- '\\''/srv/a b'\\'' && exec bash -c "$1"' hearth-exec 'echo $HOME' 2>&3 3>&-; exit $?`,
    );
  });
});

describe("tools.exec.hosts", () => {
  it("defaults the port to 22 and the variables to none", () => {
    const config = parseConfig({ tools: { exec: { hosts: { nas: { type: "ssh", host: "nas.lan", user: "me", identityFile: "~/.ssh/id_ed25519" } } } } }, { home: "/tmp/h", env: {} });
    expect(config.tools.exec.hosts).toEqual({ nas: { type: "ssh", host: "nas.lan", port: 22, user: "me", identityFile: "~/.ssh/id_ed25519", env: {} } });
  });

  it("refuses an unknown key and a bad name, saying where", () => {
    expect(() => parseConfig({ tools: { exec: { hosts: { nas: { type: "ssh", host: "n", user: "u", password: "x" } } } } }, { home: "/tmp/h", env: {} })).toThrow(/password/);
    expect(() => parseConfig({ tools: { exec: { hosts: { "a b": { type: "ssh", host: "n", user: "u" } } } } }, { home: "/tmp/h", env: {} })).toThrow('✖ Invalid key in record\n  → at tools.exec.hosts["a b"]');
  });
});
