// `hearth hosts`: the SSH hosts of tools.exec.hosts with reachability, latency and host key;
// `hearth hosts trust NAME` shows a host's key, asks, and records it in known_hosts.
import { createInterface } from "node:readline";
import type { SshHostConfig } from "../agent/tools/hosts/config.ts";
import { connectHost, HostKeyError, knownHostsFileOf } from "../agent/tools/hosts/connect.ts";
import { checkHostKey, knownHostName, readKnownHosts, recordHostKey, type HostKey } from "../agent/tools/hosts/known-hosts.ts";
import { loadConfig } from "../config/config.ts";
import { homePaths } from "../config/home.ts";
import { hearthCommand } from "../process/hearth-command.ts";
import { parse, UsageError } from "./args.ts";

interface HostsIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export type HostProbe =
  | { type: "reachable"; name: string; latencyMs: number; key: HostKey }
  | { type: "refused"; name: string; reason: string; key: HostKey }
  | { type: "unreachable"; name: string; reason: string };

export async function runHosts(home: string, args: string[], io: HostsIO): Promise<number> {
  const [action, ...rest] = args;
  const config = loadConfig({ home });
  const hosts = config.tools.exec.hosts;
  const defaultKnownHostsFile = homePaths(home).knownHosts;
  if (action === undefined || action === "list") {
    if (rest.length) throw new UsageError(`Unexpected arguments: ${rest.join(" ")}`);
    const names = Object.keys(hosts);
    if (names.length === 0) {
      io.stdout.write(`No hosts are configured: add them under "tools": { "exec": { "hosts": { … } } } in ${homePaths(home).config}.\n`);
      return 0;
    }
    const probes = await Promise.all(names.map((name) => probeHost(name, hosts[name] as SshHostConfig, defaultKnownHostsFile)));
    for (const p of probes) io.stdout.write(`${formatProbe(p, hosts[p.name] as SshHostConfig)}\n`);
    return probes.every((p) => p.type === "reachable") ? 0 : 1;
  }
  if (action === "trust") {
    const { values, positionals } = parse(rest, { yes: { type: "boolean", short: "y" } }, true);
    if (positionals.length !== 1) throw new UsageError("hosts trust needs exactly one host NAME.");
    const name = positionals[0] as string;
    const cfg = hosts[name];
    if (!cfg) throw new UsageError(`Unknown host "${name}"; configured: ${Object.keys(hosts).join(", ") || "none"}.`);
    return await trustHost(name, cfg, defaultKnownHostsFile, values.yes === true, io);
  }
  throw new UsageError(`Unknown hosts action "${action}".`);
}

/** Connects once (strictly: an unknown key is refused), runs `true`, and closes. */
export async function probeHost(name: string, cfg: SshHostConfig, defaultKnownHostsFile: string): Promise<HostProbe> {
  try {
    const { client, key } = await connectHost(name, cfg, { defaultKnownHostsFile });
    try {
      const started = performance.now();
      await new Promise<void>((resolve, reject) =>
        client.exec("true", (err, ch) => {
          if (err) return reject(err);
          ch.resume();
          ch.stderr.resume();
          ch.once("close", () => resolve());
        }),
      );
      return { type: "reachable", name, latencyMs: Math.round(performance.now() - started), key };
    } finally {
      client.end();
    }
  } catch (err) {
    if (err instanceof HostKeyError) return { type: "refused", name, reason: err.check.status === "unknown" ? "host key not trusted yet" : "host key CHANGED", key: err.offered };
    return { type: "unreachable", name, reason: (err as Error).message };
  }
}

export function formatProbe(p: HostProbe, cfg: SshHostConfig): string {
  const where = `${cfg.user}@${cfg.host}:${cfg.port}`;
  switch (p.type) {
    case "reachable":
      return `${p.name}  ${where}  reachable  ${p.latencyMs} ms  ${p.key.type} ${p.key.fingerprint}`;
    case "refused":
      return `${p.name}  ${where}  refused: ${p.reason}  ${p.key.type} ${p.key.fingerprint}  (check it, then: ${hearthCommand()} hosts trust ${p.name})`;
    case "unreachable":
      return `${p.name}  ${where}  unreachable: ${p.reason}`;
  }
}

async function trustHost(name: string, cfg: SshHostConfig, defaultKnownHostsFile: string, yes: boolean, io: HostsIO): Promise<number> {
  const file = knownHostsFileOf(cfg, { defaultKnownHostsFile });
  let offered: HostKey;
  try {
    // An unknown key is refused before anything is sent: the error carries it.
    // Connected: the key is known already.
    const { client, key } = await connectHost(name, cfg, { defaultKnownHostsFile });
    client.end();
    offered = key;
  } catch (err) {
    if (!(err instanceof HostKeyError)) {
      io.stderr.write(`hearth: ${(err as Error).message}\n`);
      return 1;
    }
    if (err.check.status === "changed") {
      io.stderr.write(`hearth: ${err.message}\n`);
      return 1;
    }
    offered = err.offered;
  }
  const knownName = knownHostName(cfg.host, cfg.port);
  if (checkHostKey(await readKnownHosts(file), knownName, offered).status === "known") {
    io.stdout.write(`${name} (${knownName}) is already trusted: ${offered.type} ${offered.fingerprint}.\n`);
    return 0;
  }
  io.stdout.write(`${name} (${knownName}) offers the ${offered.type} key ${offered.fingerprint}.\nCompare it with the server's own: ssh-keygen -lf /etc/ssh/ssh_host_${offered.type.replace(/^ssh-|-.*$/g, "")}_key.pub\n`);
  if (!yes && !(await confirm(io, `Trust this key for ${name}? [y/N] `))) {
    io.stdout.write("Not recorded.\n");
    return 1;
  }
  await recordHostKey(file, knownName, offered);
  io.stdout.write(`Recorded in ${file}.\n`);
  return 0;
}

async function confirm(io: HostsIO, question: string): Promise<boolean> {
  io.stdout.write(question);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    for await (const line of rl) return /^y(es)?$/i.test(line.trim());
    return false;
  } finally {
    rl.close();
  }
}
