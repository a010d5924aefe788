// How a command's ending is read, against an in-process SSH server (ssh2's own) whose replies we
// time exactly: the real-sshd tests are in test/e2e/exec-hosts.test.ts.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import ssh2 from "ssh2";
import type { ServerChannel } from "ssh2";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SshHosts } from "../../../../src/agent/tools/hosts/ssh-hosts.ts";
import type { ExecHostsConfig } from "../../../../src/agent/tools/hosts/config.ts";

const { Server, utils } = ssh2;

/** What the server does with each command's channel. */
type Reply = (ch: ServerChannel, conn: ssh2.Connection) => void;

let dir: string;
let server: ssh2.Server;
let port: number;
let reply: Reply = () => {};
const pools: SshHosts[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "hearth-ssh-hosts-"));
  const hostKey = ed25519Pair();
  const clientKey = ed25519Pair();
  writeFileSync(path.join(dir, "client_key"), clientKey.private, { mode: 0o600 });
  server = new Server({ hostKeys: [hostKey.private] }, (conn) => {
    conn.on("error", () => {});
    conn.on("authentication", (auth) => (auth.method === "publickey" ? auth.accept() : auth.reject(["publickey"])));
    conn.on("ready", () => {
      conn.on("session", (acceptSession) => {
        acceptSession().on("exec", (accept) => reply(accept(), conn));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  writeFileSync(path.join(dir, "known_hosts"), `[127.0.0.1]:${port} ${hostKey.public.trim()}\n`);
});

afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
});

/**
 * An ed25519 pair ssh2 can read back. Its generator drops a leading zero byte of the public key,
 * so about one pair in 256 is one it then refuses ("Malformed OpenSSH private key", ssh2 #1390).
 */
function ed25519Pair(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync("ed25519");
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error)) return pair;
  }
}

afterAll(async () => {
  if (server) await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function pool(): SshHosts {
  const hosts: ExecHostsConfig = {
    nas: { type: "ssh", host: "127.0.0.1", port, user: "me", identityFile: path.join(dir, "client_key"), knownHostsFile: path.join(dir, "known_hosts"), env: {} },
  };
  const p = new SshHosts(hosts, { defaultKnownHostsFile: path.join(dir, "none") });
  pools.push(p);
  return p;
}

const run = (hosts: SshHosts) => hosts.run("nas", { command: "echo 2", timeoutMs: 60_000, signal: new AbortController().signal });

describe("a command's ending on an SSH host", () => {
  it("a command that ends before its channel's opening is seen still reports its exit code", async () => {
    // The exec reply, the output, the exit status and the close all written in one go: the client
    // reads them in one chunk (as a busy machine does with a fast command).
    reply = (ch) => {
      ch.stderr.write("4242\n");
      ch.write("2\n");
      ch.exit(0);
      ch.end();
    };
    const hosts = pool();
    for (let i = 0; i < 5; i++) expect(await run(hosts)).toEqual({ content: "2\n[exit code 0]", isError: false });
  });

  it("a command whose exit status came in is not lost when the connection drops before its close", async () => {
    reply = (ch, conn) => {
      ch.stderr.write("4242\n");
      ch.write("2\n");
      ch.exit(0);
      conn.end();
    };
    const hosts = pool();
    expect(await run(hosts)).toEqual({ content: "2\n[exit code 0]", isError: false });
    reply = (ch) => {
      ch.stderr.write("4242\n");
      ch.write("back\n");
      ch.exit(0);
      ch.end();
    };
    expect(await run(hosts)).toEqual({ content: "back\n[exit code 0]", isError: false });
  });

  it("a connection that drops before the exit status is a lost command, with the output so far", async () => {
    reply = (ch, conn) => {
      ch.stderr.write("4242\n");
      ch.write("working\n");
      conn.end();
    };
    expect(await run(pool())).toEqual({
      content: "working\n[connection to nas lost while the command ran; it may or may not have finished there. The next command reconnects.]",
      isError: true,
    });
  });
});
