// One SSH connection to a configured host: strict host-key checking against known_hosts, key or
// agent authentication only, keep-alives. ssh2 is loaded on first use, so a daemon without hosts
// never loads it.
import { open } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Client, ConnectConfig } from "ssh2";
import type { SshHostConfig } from "./config.ts";
import { checkHostKey, hostKeyFromBlob, knownHostName, keysFor, preferredAlgorithms, readKnownHosts, type HostKey, type KeyCheck } from "./known-hosts.ts";

export const KEEPALIVE_MS = 15_000;
export const CONNECT_TIMEOUT_MS = 20_000;

/** The server offered a key that is not in known_hosts (or differs from the one there): nothing was sent to it. */
export class HostKeyError extends Error {
  readonly host: string;
  readonly offered: HostKey;
  readonly check: Exclude<KeyCheck, { status: "known" }>;
  constructor(host: string, offered: HostKey, check: Exclude<KeyCheck, { status: "known" }>, knownHostsFile: string) {
    super(hostKeyMessage(host, offered, check, knownHostsFile));
    this.name = "HostKeyError";
    this.host = host;
    this.offered = offered;
    this.check = check;
  }
}

/** The connection could not be made or the login was refused; says what to check. */
export class HostConnectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostConnectError";
  }
}

function hostKeyMessage(host: string, offered: HostKey, check: Exclude<KeyCheck, { status: "known" }>, file: string): string {
  const key = `${offered.type} key ${offered.fingerprint}`;
  if (check.status === "unknown") {
    return `The host key of ${host} is not known, so the connection was refused. The server offered the ${key}. If that is its key (compare with \`ssh-keygen -lf\` on the server), trust it with: hearth hosts trust ${host}`;
  }
  const was = check.known.map((k) => k.fingerprint).join(", ") || "a revoked key";
  return `The host key of ${host} has CHANGED, so the connection was refused: the server offered the ${key}, but ${file} records ${was}. Someone may be intercepting the connection. If the server's key really changed, remove its line from ${file} and run: hearth hosts trust ${host}`;
}

export interface ConnectOptions {
  /** Used when the host names none. */
  defaultKnownHostsFile: string;
  /** SSH_AUTH_SOCK comes from here when the host has no identityFile. */
  env?: NodeJS.ProcessEnv;
  /**
   * Called with a key known_hosts does not have; returns whether to go on. Absent: refuse
   * (only `hearth hosts trust` accepts a key, after showing it).
   */
  acceptUnknown?: (key: HostKey) => boolean;
}

export function knownHostsFileOf(cfg: SshHostConfig, opts: Pick<ConnectOptions, "defaultKnownHostsFile">): string {
  return cfg.knownHostsFile ? expandTilde(cfg.knownHostsFile) : opts.defaultKnownHostsFile;
}

/** Resolves with a ready client, or rejects with HostKeyError / HostConnectError. */
export async function connectHost(name: string, cfg: SshHostConfig, opts: ConnectOptions): Promise<{ client: Client; key: HostKey }> {
  const knownFile = knownHostsFileOf(cfg, opts);
  const known = await readKnownHosts(knownFile);
  const knownName = knownHostName(cfg.host, cfg.port);
  const auth = await authOf(name, cfg, opts.env ?? process.env);
  const { Client: SshClient } = (await import("ssh2")).default;
  const client = new SshClient();
  let refusal: HostKeyError | undefined;
  let offered: HostKey | undefined;
  const preferred = preferredAlgorithms(keysFor(known, knownName).keys);
  const config: ConnectConfig = {
    host: cfg.host,
    port: cfg.port,
    username: cfg.user,
    ...auth,
    readyTimeout: CONNECT_TIMEOUT_MS,
    keepaliveInterval: KEEPALIVE_MS,
    keepaliveCountMax: 3,
    ...(preferred.length > 0 ? { algorithms: { serverHostKey: { prepend: preferred } as NonNullable<NonNullable<ConnectConfig["algorithms"]>["serverHostKey"]> } } : {}),
    hostVerifier: (blob: Buffer) => {
      offered = hostKeyFromBlob(blob);
      const check = checkHostKey(known, knownName, offered);
      if (check.status === "known") return true;
      if (check.status === "unknown" && opts.acceptUnknown?.(offered)) return true;
      refusal = new HostKeyError(name, offered, check, knownFile);
      return false;
    },
  };
  // An error with no listener would crash the daemon: a later one (a dropped idle connection, an
  // EPIPE after a refusal) is followed by "close", which is what callers watch.
  client.on("error", () => {});
  return await new Promise((resolve, reject) => {
    const fail = (err: Error) => {
      client.end();
      reject(refusal ?? new HostConnectError(connectMessage(name, cfg, err)));
    };
    client.once("ready", () => {
      client.off("error", fail);
      resolve({ client, key: offered as HostKey });
    });
    client.once("error", fail);
    client.once("close", () => fail(new Error("the connection closed during the handshake")));
    try {
      client.connect(config);
    } catch (err) {
      // ssh2 throws at once on a key it cannot use (an encrypted one without a passphrase).
      fail(err as Error);
    }
  });
}

async function authOf(name: string, cfg: SshHostConfig, env: NodeJS.ProcessEnv): Promise<Pick<ConnectConfig, "privateKey" | "agent">> {
  if (cfg.identityFile) {
    const file = expandTilde(cfg.identityFile);
    let key: Buffer;
    let mode: number;
    try {
      // One descriptor for the check and the read: the file judged is the file used.
      const fh = await open(file, "r");
      try {
        mode = (await fh.stat()).mode & 0o777;
        key = await fh.readFile();
      } finally {
        await fh.close();
      }
    } catch (err) {
      throw new HostConnectError(`Could not read the identityFile of ${name} (${file}): ${(err as Error).message}`);
    }
    // OpenSSH ignores a private key others may read, saying why; Hearth refuses it the same way.
    if ((mode & 0o077) !== 0) {
      const octal = mode.toString(8).padStart(4, "0");
      throw new HostConnectError(`Could not use the identityFile of ${name}: UNPROTECTED PRIVATE KEY FILE! Permissions ${octal} for '${file}' are too open. It is required that your private key files are NOT accessible by others; run chmod 600 '${file}'.`);
    }
    return { privateKey: key };
  }
  if (env.SSH_AUTH_SOCK) return { agent: env.SSH_AUTH_SOCK };
  throw new HostConnectError(`${name} has no identityFile and no SSH agent is running (SSH_AUTH_SOCK is unset): set tools.exec.hosts.${name}.identityFile`);
}

function connectMessage(name: string, cfg: SshHostConfig, err: Error): string {
  const where = `${cfg.user}@${cfg.host}:${cfg.port}`;
  if (/authentication methods failed/i.test(err.message)) {
    return `Could not log in to ${name} (${where}): the server refused the key${cfg.identityFile ? ` ${cfg.identityFile}` : " offered by the SSH agent"}. Add its public key to ~/.ssh/authorized_keys of ${cfg.user} on ${cfg.host}.`;
  }
  if (/encrypted|passphrase/i.test(err.message)) {
    return `Could not use the key of ${name}: it is protected by a passphrase. Load it into an SSH agent and remove identityFile, or use a key without one.`;
  }
  return `Could not connect to ${name} (${where}): ${err.message}`;
}

function expandTilde(p: string): string {
  return p === "~" || p.startsWith("~/") ? path.join(os.homedir(), p.slice(1)) : p;
}
