// The `hearth` command. Exit codes: 0 success, 1 runtime failure, 2 bad usage or configuration.
// A command line is checked completely before anything is opened (the daemon's socket, a file):
// a usage error exits at once with the usage of that command.
//
// A thin client: each command imports only its own module, when it runs. Commands that talk to
// a running daemon (status, chat, cron, pairing, heartbeat, mcp) never load the daemon's graph
// (gateway, agent, channels, memory); `start` and chat's embedded fallback do.
import { existsSync, readFileSync } from "node:fs";
import { parse, UsageError } from "./cli/args.ts";
import { handleBrokenPipes } from "./cli/broken-pipe.ts";
import { closestCommand, commandUsage, fullUsage, isCommandName, type CommandName } from "./cli/help.ts";
import { resolveHome } from "./config/home.ts";
import { MAX_MESSAGE_CHARS, tooLongText } from "./gateway/message-limits.ts";
import { hearthCmd } from "./process/hearth-command.ts";
import type { Io } from "./cli/io.ts";
import { daemonLogger, parseLevel, underPm2 } from "./process/log.ts";
import { catchStopRequests, describeStop, type StopReason } from "./process/stop.ts";

export async function main(argv: string[], io: Io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      io.stderr.write(fullUsage());
      return 2;
    case "help":
    case "--help":
    case "-h":
      return help(rest, io);
    case "--version":
    case "-v":
    case "version":
      io.stdout.write(`hearth ${version()}\n`);
      return 0;
  }
  if (!isCommandName(command)) {
    const guess = closestCommand(command);
    // A near miss gets that command's usage; anything else the whole list.
    io.stderr.write(`hearth: Unknown command "${command}"${guess ? `; did you mean "${guess}"?` : "."}\n\n${guess ? commandUsage(guess) : fullUsage()}`);
    return 2;
  }
  if (wantsHelp(rest)) {
    io.stdout.write(commandUsage(command));
    return 0;
  }
  try {
    return await runCommand(command, rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`hearth: ${err.message}\n\n${commandUsage(command)}`);
      return 2;
    }
    if (await isConfigurationError(err)) {
      io.stderr.write(`hearth: ${(err as Error).message}\n`);
      // ecosystem.config.cjs has pm2 stop, not restart, on exit code 2: say how to start again.
      if (command === "start" && underPm2()) io.stderr.write(`pm2 will not restart Hearth until this is fixed. Then: ${hearthCmd("restart")}\n`);
      return 2;
    }
    io.stderr.write(`hearth: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function runCommand(command: CommandName, rest: string[], io: Io): Promise<number> {
  const home = resolveHome();
  switch (command) {
    case "start": {
      parse(rest, {});
      const supervised = await startThroughSupervisor(home, io);
      if (supervised !== null) return supervised;
      // Loading the daemon's code takes a while (seconds on a busy machine). Nothing is open
      // yet: a stop asked for meanwhile ends the process at once, and cleanly.
      const { promise: stopped, resolve: stopWith } = Promise.withResolvers<StopReason>();
      const off = catchStopRequests().onStop(stopWith);
      const start = await Promise.race([import("./cli/start.ts"), stopped]);
      off();
      if ("kind" in start) {
        daemonLogger(parseLevel(process.env.HEARTH_LOG, "info")).info("gateway.stopping", { ...describeStop(start), during: "start-up" });
        process.exit(0);
      }
      // Once the gateway has stopped, everything is closed and written: exit now, without
      // waiting for file-system calls the workspace scan had queued (a second or more).
      process.exit(await start.runStart(home));
    }
    case "chat":
      return await runChat(home, rest, io);
    case "setup":
      return await (await import("./cli/setup.ts")).runSetup(home, rest, io);
    case "stop":
    case "restart": {
      parse(rest, {});
      const control = await import("./cli/daemon-control.ts");
      return await (command === "stop" ? control.runStop(home, io) : control.runRestart(home, io));
    }
    case "logs": {
      const { values } = parse(rest, { follow: { type: "boolean", short: "f" }, lines: { type: "string", short: "n" }, json: { type: "boolean" } });
      const lines = Number(values.lines ?? 50);
      if (!Number.isInteger(lines) || lines < 0) throw new UsageError("-n takes a number of lines");
      return await (await import("./cli/daemon-control.ts")).runLogs(home, io, { follow: values.follow === true, lines, json: values.json === true });
    }
    case "completion": {
      const { positionals } = parse(rest, {}, true);
      const { completionScript, SHELLS } = await import("./cli/completion.ts");
      const shell = SHELLS.find((s) => s === positionals[0]);
      if (!shell || positionals.length !== 1) throw new UsageError(`completion takes one shell: ${SHELLS.join(", ")}`);
      io.stdout.write(completionScript(shell));
      return 0;
    }
    case "status": {
      const { values } = parse(rest, { json: { type: "boolean" } });
      return await (await import("./cli/status.ts")).runStatus(home, values.json === true, io);
    }
    case "init":
      parse(rest, {});
      return await runInit(home, io);
    case "pairing":
      return await (await import("./cli/pairing.ts")).runPairing(home, rest, io);
    case "people":
      return await (await import("./cli/people.ts")).runPeople(home, rest, io);
    case "grants":
      return (await import("./cli/grants.ts")).runGrants(home, rest, io);
    case "doctor": {
      const { values } = parse(rest, { online: { type: "boolean" }, fix: { type: "boolean" } });
      return await (await import("./cli/doctor.ts")).runDoctor(home, io, process.env, { online: values.online === true, fix: values.fix === true });
    }
    case "cron":
      return await (await import("./cli/cron.ts")).runCron(home, rest, io);
    case "usage":
      return (await import("./cli/usage.ts")).runUsage(home, rest, io);
    case "heartbeat":
      return await (await import("./cli/heartbeat.ts")).runHeartbeat(home, rest, io);
    case "skills":
      return await (await import("./cli/skills.ts")).runSkills(home, rest, io);
    case "mcp":
      return await (await import("./cli/mcp.ts")).runMcp(home, rest, io);
    case "tasks":
      return await (await import("./cli/tasks.ts")).runTasks(home, rest, io);
    case "dashboard":
      return await (await import("./cli/dashboard.ts")).runDashboard(home, rest, io);
    case "backup":
      return await (await import("./cli/backup.ts")).runBackup(home, rest, io, version());
    case "memory":
      return await (await import("./cli/memory.ts")).runMemory(home, rest, io);
    case "hosts":
      return await (await import("./cli/hosts.ts")).runHosts(home, rest, io);
    case "service":
      return await (await import("./cli/service.ts")).runService(home, rest, io);
    default:
      command satisfies never;
      return 2;
  }
}

/**
 * A terminal's `hearth start` while pm2 or the systemd unit has Hearth for this home: started
 * through it (cli/daemon-control.ts), not beside it. null when the daemon is to run here: no
 * supervisor has Hearth, or this process is the supervisor's own start.
 */
async function startThroughSupervisor(home: string, io: Io): Promise<number | null> {
  const { startedBySupervisor, supervisorFile } = await import("./cli/supervisor.ts");
  if (startedBySupervisor() || !existsSync(supervisorFile(home))) return null;
  return await (await import("./cli/daemon-control.ts")).startSupervised(home, io);
}

/** `hearth help [COMMAND]`. */
function help(rest: string[], io: Io): number {
  const [topic, ...extra] = rest;
  if (topic === undefined) {
    io.stdout.write(fullUsage());
    return 0;
  }
  if (!isCommandName(topic) || extra.length > 0) {
    io.stderr.write(`hearth: ${isCommandName(topic) ? `Unexpected argument "${extra[0]}"` : `Unknown command "${topic}"`}.\n\n${fullUsage()}`);
    return 2;
  }
  io.stdout.write(commandUsage(topic));
  return 0;
}

/** `--help` or `-h` anywhere before a `--`. */
function wantsHelp(args: string[]): boolean {
  for (const a of args) {
    if (a === "--") return false;
    if (a === "--help" || a === "-h") return true;
  }
  return false;
}

function version(): string {
  return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

/**
 * Errors that mean "fix your setup" (exit 2). Their classes live in the daemon's modules, which
 * are imported here only once such an error happened: a module a command never loaded cannot
 * have thrown it, and an import is cached, so this loads nothing new in that case.
 */
async function isConfigurationError(err: unknown): Promise<boolean> {
  if (!(err instanceof Error)) return false;
  const [{ ConfigError }, { MissingApiKeyError }, { LockHeldError }, { SandboxUnavailableError }, { NewerStateError }, { HomeOpenError }] = await Promise.all([
    import("./config/config.ts"),
    import("./config/credentials.ts"),
    import("./gateway/upkeep/lock.ts"),
    import("./agent/tools/sandbox.ts"),
    import("./state/versions.ts"),
    import("./config/home-modes.ts"),
  ]);
  return err instanceof ConfigError || err instanceof MissingApiKeyError || err instanceof LockHeldError || err instanceof SandboxUnavailableError || err instanceof NewerStateError || err instanceof HomeOpenError;
}

async function runInit(home: string, io: Io): Promise<number> {
  const { initHome } = await import("./config/init.ts");
  const { created, kept } = initHome(home);
  io.stdout.write(`Hearth home: ${home}\n`);
  for (const p of created) io.stdout.write(`  created ${p}\n`);
  for (const p of kept) io.stdout.write(`  kept    ${p} (already there)\n`);
  const haveKey = Boolean(process.env.ANTHROPIC_API_KEY?.trim());
  io.stdout.write(haveKey ? `\nNext: try ${hearthCmd('chat -m "hello"')}\n` : `\nNext: set ANTHROPIC_API_KEY, then try: ${hearthCmd('chat -m "hello"')}\n`);
  return 0;
}

async function runChat(home: string, args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { message: { type: "string", short: "m" }, attach: { type: "string", multiple: true } });
  const { attachablePath, chatInteractive, chatOnce, openClient } = await import("./cli/chat.ts");
  const files = (values.attach ?? []).map(attachablePath);
  const text = values.message ?? (files.length > 0 ? "" : undefined);
  if (text !== undefined && !text.trim() && files.length === 0) throw new UsageError("The message is empty.");
  if (text !== undefined && text.length > MAX_MESSAGE_CHARS) throw new UsageError(tooLongText(text.length));
  const client = await openClient(home, io.stderr, text === undefined);
  try {
    return text !== undefined ? await chatOnce(client, text, io, files) : await chatInteractive(client, io);
  } finally {
    await client.close();
  }
}

/** The process entry point (bin/hearth.js): main() plus what only a real process needs. */
export async function run(argv: string[]): Promise<number> {
  // bin/hearth.js did this already, before the heavy imports; this covers running this file.
  if (argv[0] === "start") catchStopRequests();
  handleBrokenPipes(argv[0] === "start" ? "ignore" : "exit");
  return main(argv);
}

if (import.meta.main) {
  process.exitCode = await run(process.argv.slice(2));
}
