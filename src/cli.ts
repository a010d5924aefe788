// The `hearth` command. Exit codes: 0 success, 1 runtime failure, 2 bad usage or configuration.
// A command line is checked completely before anything is opened (the daemon's socket, a file):
// a usage error exits at once with the usage of that command.
import { readFileSync } from "node:fs";
import { attachablePath, chatInteractive, chatOnce, openClient } from "./cli/chat.ts";
import { parse, UsageError } from "./cli/args.ts";
import { handleBrokenPipes } from "./cli/broken-pipe.ts";
import { runCron } from "./cli/cron.ts";
import { runDoctor } from "./cli/doctor.ts";
import { runHeartbeat } from "./cli/heartbeat.ts";
import { runMcp } from "./cli/mcp.ts";
import { runSkills } from "./cli/skills.ts";
import { runPairing } from "./cli/pairing.ts";
import { runStart } from "./cli/start.ts";
import { runStatus } from "./cli/status.ts";
import { runUsage } from "./cli/usage.ts";
import { SandboxUnavailableError } from "./agent/tools/sandbox.ts";
import { commandUsage, fullUsage, isCommandName, type CommandName } from "./cli/help.ts";
import { MissingApiKeyError } from "./gateway/agent-runtime.ts";
import { ConfigError } from "./gateway/config.ts";
import { resolveHome } from "./gateway/home.ts";
import { initHome } from "./gateway/init.ts";
import { LockHeldError } from "./gateway/lock.ts";
import { MAX_MESSAGE_CHARS, tooLongText } from "./gateway/router.ts";
import { hearthCmd } from "./hearth-command.ts";

export interface Io {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

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
    io.stderr.write(`hearth: Unknown command "${command}".\n\n${fullUsage()}`);
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
    if (err instanceof ConfigError || err instanceof MissingApiKeyError || err instanceof LockHeldError || err instanceof SandboxUnavailableError) {
      io.stderr.write(`hearth: ${err.message}\n`);
      return 2;
    }
    io.stderr.write(`hearth: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function runCommand(command: CommandName, rest: string[], io: Io): Promise<number> {
  const home = resolveHome();
  switch (command) {
    case "start":
      parse(rest, {});
      return await runStart(home);
    case "chat":
      return await runChat(home, rest, io);
    case "status": {
      const { values } = parse(rest, { json: { type: "boolean" } });
      return await runStatus(home, values.json === true, io);
    }
    case "init":
      parse(rest, {});
      return runInit(home, io);
    case "pairing":
      return await runPairing(home, rest, io);
    case "doctor": {
      const { values } = parse(rest, { online: { type: "boolean" } });
      return await runDoctor(home, io, process.env, { online: values.online === true });
    }
    case "cron":
      return await runCron(home, rest, io);
    case "usage":
      return runUsage(home, rest, io);
    case "heartbeat":
      return await runHeartbeat(home, rest, io);
    case "skills":
      return await runSkills(home, rest, io);
    case "mcp":
      return await runMcp(home, rest, io);
    default:
      command satisfies never;
      return 2;
  }
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

function runInit(home: string, io: Io): number {
  const { created, kept } = initHome(home);
  io.stdout.write(`Hearth home: ${home}\n`);
  for (const p of created) io.stdout.write(`  created ${p}\n`);
  for (const p of kept) io.stdout.write(`  kept    ${p} (already there)\n`);
  io.stdout.write(`\nNext: set ANTHROPIC_API_KEY, then try: ${hearthCmd('chat -m "hello"')}\n`);
  return 0;
}

async function runChat(home: string, args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { message: { type: "string", short: "m" }, attach: { type: "string", multiple: true } });
  const files = (values.attach ?? []).map(attachablePath);
  const text = values.message ?? (files.length > 0 ? "" : undefined);
  if (text !== undefined && !text.trim() && files.length === 0) throw new UsageError("The message is empty.");
  if (text !== undefined && text.length > MAX_MESSAGE_CHARS) throw new UsageError(tooLongText(text.length));
  const client = await openClient(home, io.stderr);
  try {
    return text !== undefined ? await chatOnce(client, text, io, files) : await chatInteractive(client, io);
  } finally {
    await client.close();
  }
}

/** The process entry point (bin/hearth.js): main() plus what only a real process needs. */
export async function run(argv: string[]): Promise<number> {
  handleBrokenPipes(argv[0] === "start" ? "ignore" : "exit");
  return main(argv);
}

if (import.meta.main) {
  process.exitCode = await run(process.argv.slice(2));
}
