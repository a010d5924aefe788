// `hearth doctor`: checks everything Hearth needs, one line per check, with a fix for each
// problem. It keeps going when something is broken (a bad config must not hide a bad cron
// job), never prints a secret, and contacts nothing but the local daemon's socket and the
// configured MCP servers (each is started once to list its tools, then stopped) — unless
// `--online` asks it to try each model provider too (doctor-online.ts).
import { installCommand, missingPackages } from "../channels/packages.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { closeSync, existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parse as parseJsonc } from "jsonc-parser";
import { ConfigError, loadConfig, parseConfig } from "../config/config.ts";
import { configSchema, type Config } from "../config/schema.ts";
import { octal, openToOthers } from "../config/home-modes.ts";
import { CREDENTIAL_KEY, isReference, placesOf, secretFields } from "../fields/secret-fields.ts";
import { systemTimeZone } from "../fields/config-fields.ts";
import { DAMAGED_FIX, describeDamaged, listDamaged } from "../gateway/upkeep/damaged-state.ts";
import { homePaths } from "../config/home.ts";
import { readSecrets, withSecrets } from "../config/secrets.ts";
import { CONFIG_VERSION } from "../config/migrations.ts";
import { liveHolder, readLock } from "../gateway/upkeep/lock.ts";
import { JobStore } from "../scheduler/job-store.ts";
import { nextRunAfter } from "../scheduler/schedule.ts";
import { MIN_EVERY_MS } from "../scheduler/service.ts";
import { BWRAP_INSTALL, describeSandbox, resolveExecSandbox, SandboxUnavailableError } from "../agent/tools/sandbox.ts";
import { silentLogger } from "../process/log.ts";
import { IDENTITY_FILES, PRIVATE_FILES } from "../memory/visibility.ts";
import { ProblemLog } from "../memory/workspace-files.ts";
import { openWorkspaceFile } from "../memory/workspace-open.ts";
import { missingKeyOf, splitModelName } from "../agent/providers/presets.ts";
import type { ChannelDescriptor } from "../channels/descriptor.ts";
import { CONFIGURABLE } from "../channels/registry.ts";
import { connectDaemon } from "./client.ts";
import { checkMcpServers } from "./mcp.ts";
import { checkSkills } from "./skills.ts";
import { checkProvidersOnline } from "./doctor-online.ts";
import type { Check } from "./doctor-check.ts";

const BWRAP_HINT = `install them: ${BWRAP_INSTALL}`;
const ok = (name: string, detail: string): Check => ({ name, ok: true, detail });
const problem = (name: string, detail: string, fix: string): Check => ({ name, ok: false, detail, fix });

export async function runDoctor(home: string, io: { stdout: NodeJS.WritableStream }, env: NodeJS.ProcessEnv = process.env, opts: { online?: boolean; fix?: boolean } = {}): Promise<number> {
  if (opts.fix) {
    const { fixHome } = await import("./doctor-fix.ts");
    const { fixed, skipped } = fixHome(home, env);
    io.stdout.write(fixed.length > 0 ? `Fixed:\n${fixed.map((l) => `  ✓ ${l}\n`).join("")}` : "Nothing needed fixing.\n");
    if (skipped.length > 0) io.stdout.write(`Not fixed:\n${skipped.map((l) => `  - ${l}\n`).join("")}`);
    io.stdout.write("\n");
  }
  const checks = await doctor(home, env, opts);
  for (const c of checks) {
    // "!": works, but with a risk the owner should know about (the fix says how to remove it).
    io.stdout.write(`${c.ok ? (c.fix ? "!" : "✓") : "✗"} ${c.name}: ${c.detail}\n`);
    if (c.fix) io.stdout.write(`    fix: ${c.fix}\n`);
  }
  const failed = checks.filter((c) => !c.ok).length;
  // A "!" line works but carries a risk: not "fine", though not a problem for the exit code.
  const warned = checks.filter((c) => c.ok && c.fix).length;
  const warnings = warned ? `${warned} warning${warned === 1 ? "" : "s"} (!)` : "";
  io.stdout.write(failed ? `\n${failed} problem${failed === 1 ? "" : "s"} found${warned ? `, and ${warnings}` : ""}.\n` : warned ? `\nNo problems; ${warnings} above.\n` : "\nEverything looks fine.\n");
  // An invalid config.json is a configuration error, as for `start`: exit 2.
  if (checks.some((c) => c.name === "config" && !c.ok)) return 2;
  return failed ? 1 : 0;
}

export async function doctor(home: string, env: NodeJS.ProcessEnv, opts: { online?: boolean } = {}): Promise<Check[]> {
  const paths = homePaths(home);
  const checks: Check[] = [checkNode()];

  if (!existsSync(home)) checks.push(problem("home", `${home} does not exist yet`, `run \`${hearthCmd("init")}\` (or \`${hearthCmd("start")}\`, which creates it)`));
  else checks.push(ok("home", home));

  // A broken config is reported; the other checks go on with the defaults (and the env).
  let config: Config;
  try {
    config = loadConfig({ home, env });
    checks.push(ok("config", existsSync(paths.config) ? `${paths.config} is valid` : "no config.json: all defaults"));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    checks.push(problem("config", err.message.replace(/\n/g, "\n    "), `edit ${paths.config}; every key and its default is described by \`${hearthCmd("init")}\`'s template`));
    // With the keys of .env, as loadConfig would have had them: a key there is still found.
    config = parseConfig({}, { home, env: withSecrets(home, env) });
  }

  checks.push(checkApiKey(config, paths, env, readSecrets(home)));
  checks.push(...checkModes(home), ...checkConfigVersion(paths.config));
  checks.push(checkExecSandbox(config, home));
  checks.push(...checkUnconfinedServers(config));
  checks.push(...checkChannels(home, config));
  checks.push(...checkWorkspace(config.workspace));
  checks.push(await checkDaemon(paths.lock, paths.socket));
  checks.push(...checkCron(paths.jobs, config.timezone || systemTimeZone()));
  checks.push(checkIndex(paths.memoryDb));
  checks.push(...listDamaged(home).map((d) => problem("state", describeDamaged(d), DAMAGED_FIX)));
  checks.push(...checkSkills(config.workspace), ...(await checkMcpServers(config, home)));
  checks.push(...(await checkExecHosts(config, home)));
  if (opts.online) checks.push(...(await checkProvidersOnline(config, env, paths.secrets)), ...(await checkChannelsOnline(config)));
  return checks;
}

/** Each SSH host of tools.exec.hosts, connected to as `exec` would (strict host key). */
async function checkExecHosts(config: Config, home: string): Promise<Check[]> {
  const entries = Object.entries(config.tools.exec.hosts);
  if (entries.length === 0) return [];
  const { probeHost } = await import("./hosts.ts");
  const probes = await Promise.all(entries.map(([name, cfg]) => probeHost(name, cfg, homePaths(home).knownHosts)));
  return probes.map((p): Check => {
    const name = `host ${p.name}`;
    switch (p.type) {
      case "reachable":
        return ok(name, `reachable, ${p.latencyMs} ms, ${p.key.type} ${p.key.fingerprint}`);
      case "refused":
        return problem(name, `${p.reason}: ${p.key.type} ${p.key.fingerprint}`, `check the key on the server, then: ${hearthCmd(`hosts trust ${p.name}`)}`);
      case "unreachable":
        return problem(name, p.reason, "check the host, port, user and identityFile in tools.exec.hosts");
    }
  });
}

function checkNode(): Check {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (major > 22 || (major === 22 && minor >= 18)) return ok("node", `Node ${process.versions.node}`);
  return problem("node", `Node ${process.versions.node} cannot run Hearth's TypeScript directly`, "run `npm install` in the Hearth folder (it fetches Node 24), or install Node 24");
}

/** `secrets`: the home's .env, which loadConfig merged into `config` like the environment. */
function checkApiKey(config: Config, paths: { config: string; secrets: string }, env: NodeJS.ProcessEnv, secrets: Record<string, string>): Check {
  const used = [config.model.name, ...config.model.fallbacks].map((n) => splitModelName(n).provider);
  if (!used.includes("anthropic")) return checkProviderKeys(config, used, paths.secrets);
  const key = config.model.apiKey ?? rawApiKey(paths.config);
  // The environment wins over .env, which wins over config.json (config/secrets.ts).
  const source = env.ANTHROPIC_API_KEY?.trim() ? "ANTHROPIC_API_KEY" : secrets.ANTHROPIC_API_KEY ? ".env" : key ? "config.json" : null;
  if (!key && config.model.baseUrl) return ok("api key", `none set; requests go to ${config.model.baseUrl}`);
  if (!key) {
    return problem("api key", "no Anthropic API key", keysFix(["ANTHROPIC_API_KEY=sk-ant-…"], paths.secrets, true));
  }
  if (!config.model.baseUrl && !key.startsWith("sk-ant-")) {
    return problem("api key", `the key from ${source} does not look like an Anthropic key (they start with "sk-ant-")`, "copy the key again from the Anthropic Console");
  }
  return ok("api key", `set (from ${source}; not shown)`);
}

/** Without an Anthropic model: the hosted providers in use need their keys; local servers do not. */
/** Keys live in the home's .env (never in config.json, which setup and an upgrade keep free of them). */
const keysFix = (assignments: string[], secretsFile: string, bySetup = false) =>
  `${bySetup ? `\`${hearthCmd("setup")}\` puts it in ${secretsFile}, or add ${assignments.join(" ")} there yourself` : `add ${assignments.join(" ")} to ${secretsFile}`} (or export it)`;

function checkProviderKeys(config: Config, used: string[], secretsFile: string): Check {
  const missing = [...new Set(used)].filter((name) => missingKeyOf(name, config.providers[name]) !== null);
  if (missing.length === 0) return ok("api key", `not needed for Anthropic; providers in use: ${[...new Set(used)].join(", ")}`);
  const envs = missing.map((name) => missingKeyOf(name, config.providers[name])!.keyEnv ?? `${name.toUpperCase()}_API_KEY`);
  return problem("api key", `no key for ${missing.join(", ")}`, keysFix(envs.map((e) => `${e}=…`), secretsFile));
}

/** model.apiKey from a config.json that does not validate as a whole. */
function rawApiKey(configPath: string): string | undefined {
  try {
    const raw = parseJsonc(readFileSync(configPath, "utf8"), [], { allowTrailingComma: true }) as { model?: { apiKey?: unknown } };
    return typeof raw?.model?.apiKey === "string" ? raw.model.apiKey : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The home folder, `.env` and `config.json` must be owner-only: `hearth start` refuses them
 * otherwise (config/home-modes.ts). Whether config.json holds a secret is read from the schema's
 * marks (src/fields/secret-fields.ts).
 */
function checkModes(home: string): Check[] {
  const fix = (p: string) => `chmod ${p === home ? "700" : "600"} ${p} (or \`${hearthCmd("doctor --fix")}\`)`;
  return openToOthers(home).map((o) => {
    const mode = `mode ${octal(o.mode)}`;
    if (o.label === ".env") return problem("secrets file", `${o.path} holds keys and is readable by other users (${mode})`, fix(o.path));
    if (o.label === "config.json") {
      if (configHoldsSecret(o.path)) return problem("config file", `${o.path} holds a secret and is readable by other users (${mode})`, `chmod 600 ${o.path}`);
      return problem("config file", `${o.path} is readable by other users (${mode}); \`${hearthCmd("start")}\` refuses to run until it is owner-only`, fix(o.path));
    }
    return problem("home folder", `${o.path} is open to other users (${mode}); \`${hearthCmd("start")}\` refuses to run until it is owner-only`, fix(o.path));
  });
}

function configHoldsSecret(configPath: string): boolean {
  let raw: unknown;
  try {
    raw = parseJsonc(readFileSync(configPath, "utf8"), [], { allowTrailingComma: true });
  } catch {
    return false;
  }
  return secretFields(configSchema).some((f) => placesOf(f, raw).some((at) => typeof at.value === "string" && at.value.trim() !== "" && !isReference(at.value) && (f.mark.secret === "value" || CREDENTIAL_KEY.test(at.path.at(-1)!))));
}

/** An older config.json works (it is migrated in memory) but is rewritten at the next start. */
function checkConfigVersion(configPath: string): Check[] {
  let raw: unknown;
  try {
    raw = parseJsonc(readFileSync(configPath, "utf8"), [], { allowTrailingComma: true });
  } catch {
    return [];
  }
  const version = raw && typeof raw === "object" ? ((raw as { version?: unknown }).version ?? 0) : CONFIG_VERSION;
  if (typeof version !== "number" || version >= CONFIG_VERSION) return [];
  return [{ name: "config version", ok: true, detail: `config.json is version ${version}; the next start migrates it to ${CONFIG_VERSION} (keeping config.json.v${version}.bak)`, fix: `\`${hearthCmd("doctor --fix")}\` migrates it now` }];
}

/** Stdio MCP servers the owner took out of the sandbox: they reach any address, and the whole file system. */
function checkUnconfinedServers(config: Config): Check[] {
  return Object.entries(config.mcp.servers)
    .filter(([, s]) => s.enabled && s.command && s.sandbox === false && config.tools.exec.sandbox !== "off")
    .map(([name]) => ({
      name: `MCP server ${name}`,
      ok: true,
      detail: "runs outside the sandbox (sandbox: false): it reaches any address directly and can read Hearth's config.json",
      fix: `remove "sandbox": false from mcp.servers.${name} unless it needs files outside the workspace or under /tmp`,
    }));
}

function checkExecSandbox(config: Config, home: string): Check {
  const { sandbox: mode, network } = config.tools.exec;
  try {
    const sb = resolveExecSandbox({ mode, network, home, workspace: config.workspace });
    if (sb.kind === "bwrap") return ok("exec sandbox", describeSandbox(sb));
    // Off is the owner's choice, with its risk named; no sandbox where one is wanted means no exec at all.
    if (sb.why === "off") return { name: "exec sandbox", ok: true, detail: describeSandbox(sb, false), fix: `set "tools": { "exec": { "sandbox": "auto" } }, then ${BWRAP_HINT}` };
    return problem("exec sandbox", describeSandbox(sb, false), sb.fix ?? BWRAP_HINT);
  } catch (err) {
    if (!(err instanceof SandboxUnavailableError)) throw err;
    return problem("exec sandbox", err.message.split("\n")[0]!, BWRAP_HINT);
  }
}

/**
 * Each configured chat channel, by its descriptor: its credentials there and of the platform's
 * shape (the rule setup checks too), an owner named, and the descriptor's own checks.
 */
function checkChannels(home: string, config: Config): Check[] {
  const out: Check[] = [];
  const sections = config.channels as Record<string, Record<string, unknown> | undefined>;
  for (const c of CONFIGURABLE) {
    const section = sections[c.id];
    if (section) out.push(...channelChecks(home, c, section));
  }
  if (out.length === 0) out.push(ok("channels", `none configured: the terminal only (\`${hearthCmd("chat")}\`)`));
  return out;
}

function channelChecks(home: string, c: ChannelDescriptor, section: Record<string, unknown>): Check[] {
  for (const cred of c.credentials ?? []) {
    const value = section[cred.key];
    if (typeof value !== "string" || value === "") return [problem(c.id, `configured without ${cred.key === "token" ? "a token" : cred.key}`, `export ${cred.variable}=… (${cred.source}) or set channels.${c.id}.${cred.key}`)];
    const shape = cred.shapeProblem?.(value);
    if (shape) return [problem(c.id, shape.problem, shape.fix)];
  }
  const libs = missingPackages(home, c);
  if (libs.length > 0) return [problem(c.id, `its libraries are not installed (${libs.join(", ")})`, `${hearthCmd("setup")} installs them, or: ${installCommand(home, libs)}`)];
  const owners = c.access?.(section).ownerIds ?? [];
  const ownerKey = c.ownerKey ?? "ownerIds";
  if (c.access && owners.length === 0) return [problem(c.id, `no ${ownerKey}: nobody gets your private, full-access chat`, `add your ${c.name} user id to channels.${c.id}.${ownerKey}${c.ownerIdHint ? ` (${c.ownerIdHint})` : ""}`)];
  const own = (c.check?.(section) ?? []).map((k) => ({ name: c.id, ...k }));
  return [ok(c.id, `${c.credentials?.length ? "token set (not shown), " : ""}owner ${owners.join(", ")}`), ...own];
}

/** `--online`: each configured channel with its credentials tries them against its platform (one cheap request). */
async function checkChannelsOnline(config: Config): Promise<Check[]> {
  const sections = config.channels as Record<string, Record<string, unknown> | undefined>;
  const out: Check[] = [];
  for (const c of CONFIGURABLE) {
    const section = sections[c.id];
    if (!section || !c.checkOnline || (c.credentials ?? []).some((k) => typeof section[k.key] !== "string")) continue;
    out.push({ name: `${c.id} online`, ...(await c.checkOnline(section)) });
  }
  return out;
}

function checkWorkspace(workspace: string): Check[] {
  if (!existsSync(workspace)) return [problem("workspace", `${workspace} does not exist`, `run \`${hearthCmd("init")}\` to create it from the templates`)];
  const missing = [...IDENTITY_FILES, ...PRIVATE_FILES].filter((f) => !existsSync(path.join(workspace, f)));
  const unreadable: string[] = [];
  const large: string[] = [];
  const linked: string[] = [];
  for (const f of [...IDENTITY_FILES, ...PRIVATE_FILES]) {
    const p = path.join(workspace, f);
    if (!existsSync(p)) continue;
    const refused = refusedLink(workspace, f);
    if (refused) {
      linked.push(`${f} (${refused})`);
      continue;
    }
    try {
      const st = statSync(p);
      if (!st.isFile()) {
        unreadable.push(`${f} (not a file)`);
        continue;
      }
      const text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(p));
      if (text.length > 20_000) large.push(`${f} (${text.length.toLocaleString("en-US")} characters)`);
    } catch (err) {
      unreadable.push(`${f} (${err instanceof TypeError ? "not UTF-8" : (err as Error).message})`);
    }
  }
  const out: Check[] = [];
  if (missing.length) out.push(problem("workspace", `missing ${missing.join(", ")}`, `run \`${hearthCmd("init")}\`: it restores missing template files and never overwrites yours`));
  if (unreadable.length) out.push(problem("workspace", `unreadable: ${unreadable.join(", ")}`, "save these files as UTF-8 text"));
  if (linked.length) out.push(problem("workspace", `left out of every prompt: ${linked.join(", ")}`, "replace each with a plain file: Hearth does not follow links that could carry private files or config.json into a chat"));
  if (large.length) out.push(problem("workspace", `only the first 20,000 characters are used of ${large.join(", ")}`, "move older material into memory/ notes; memory_search still finds it"));
  if (out.length === 0) out.push(ok("workspace", `${workspace}: all files present`));
  return out;
}

async function checkDaemon(lockPath: string, socketPath: string): Promise<Check> {
  const record = readLock(lockPath);
  const holder = liveHolder(lockPath);
  const client = await connectDaemon(socketPath);
  if (client) {
    await client.close();
    return ok("daemon", `running${holder ? ` (pid ${holder.pid})` : ""}, answering on ${socketPath}`);
  }
  if (holder) {
    return problem(
      "daemon",
      `pid ${holder.pid} holds the lock but does not answer on ${socketPath}`,
      `check its log (\`${hearthCmd("logs")}\`); if it hangs, \`${hearthCmd("restart")}\` restarts it through whatever runs it (pm2, systemd or none). Before killing pid ${holder.pid} by hand, check it is Hearth: \`ps -o pid,lstart,args -p ${holder.pid}\` shows \`hearth.js start\``,
    );
  }
  if (record) return ok("daemon", `not running (a lock from pid ${record.pid}, which is gone or now another process, is left; the next start takes it over)`);
  return ok("daemon", `not running (start it with \`${hearthCmd("start")}\`)`);
}

function checkCron(jobsPath: string, timezone: string): Check[] {
  if (!existsSync(jobsPath)) return [ok("cron", "no scheduled jobs")];
  const loaded = new JobStore(jobsPath, { timezone, minEveryMs: MIN_EVERY_MS }, silentLogger).read();
  if (!loaded.ok) {
    return [problem("cron", `${jobsPath} is invalid: ${loaded.problem}`, `fix it by hand, or remove the job with \`${hearthCmd("cron rm ID")}\`; until then the daemon keeps the jobs it had`)];
  }
  if (loaded.jobs.length === 0) return [ok("cron", "no scheduled jobs")];
  const now = Date.now();
  return loaded.jobs.map((job) => {
    if (!job.enabled) return ok(`cron ${job.id}`, `"${job.name}" is disabled`);
    const anchor = job.createdAt ? Date.parse(job.createdAt) : now;
    const next = nextRunAfter(job.schedule, now, anchor, timezone);
    return next === null
      ? ok(`cron ${job.id}`, `"${job.name}" has no run left (a one-shot in the past)`)
      : ok(`cron ${job.id}`, `"${job.name}" next runs ${new Date(next).toISOString()}`);
  });
}

function checkIndex(dbPath: string): Check {
  if (!existsSync(dbPath)) return ok("memory index", "not built yet (the daemon builds it at start)");
  try {
    const db = new DatabaseSync(dbPath, { readOnly: true });
    try {
      const quick = db.prepare("PRAGMA quick_check").get() as { quick_check?: string } | undefined;
      if (quick?.quick_check !== "ok") throw new Error(quick?.quick_check ?? "quick_check failed");
      const files = (db.prepare("SELECT count(*) AS n FROM files").get() as { n: number }).n;
      return ok("memory index", `${files} file${files === 1 ? "" : "s"} indexed`);
    } finally {
      db.close();
    }
  } catch (err) {
    return problem("memory index", `${dbPath} is damaged (${(err as Error).message})`, `delete it; it is only a cache and the daemon rebuilds it at start`);
  }
}

/** Why the memory opener refuses the workspace file `rel` (a link), or null when it does not. */
function refusedLink(workspace: string, rel: string): string | null {
  const opened = openWorkspaceFile({ workspace, relPath: rel, scope: { kind: "main" }, mode: "read" }, new ProblemLog(silentLogger));
  if (opened.type === "ok") closeSync(opened.fd);
  return opened.type === "refused" ? opened.reason : null;
}
