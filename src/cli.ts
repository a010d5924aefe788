// The `hearth` command. Exit codes: 0 success, 1 runtime failure, 2 bad usage or configuration.
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { chatOnce } from "./cli/chat.ts";
import { UsageError } from "./cli/errors.ts";
import { MissingApiKeyError } from "./gateway/agent-runtime.ts";
import { ConfigError, loadConfig } from "./gateway/config.ts";
import { resolveHome } from "./gateway/home.ts";
import { initHome } from "./gateway/init.ts";
import { createLogger, parseLevel } from "./log.ts";

const USAGE = `Usage: hearth <command> [options]

Commands:
  init                 create the home folder, a commented config.json and the workspace
  chat -m "TEXT"       send one message to your main session; the reply streams to stdout

Environment:
  HEARTH_HOME          the home folder (default ~/.hearth)
  ANTHROPIC_API_KEY    the model API key (or model.apiKey in config.json)
  ANTHROPIC_BASE_URL   another Messages API endpoint (a proxy)
  HEARTH_LOG           log level: debug, info, warn or error
`;

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

export async function main(argv: string[], io: Io = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const [command, ...rest] = argv;
  const home = resolveHome();
  try {
    switch (command) {
      case "init":
        return runInit(home, rest, io);
      case "chat":
        return await runChat(home, rest, io);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`Unknown command "${command}".`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`hearth: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError || err instanceof MissingApiKeyError) {
      io.stderr.write(`hearth: ${err.message}\n`);
      return 2;
    }
    io.stderr.write(`hearth: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

function parse<O extends ParseArgsOptionsConfig>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function runInit(home: string, args: string[], io: Io): number {
  parse(args, {});
  const { created, kept } = initHome(home);
  io.stdout.write(`Hearth home: ${home}\n`);
  for (const p of created) io.stdout.write(`  created ${p}\n`);
  for (const p of kept) io.stdout.write(`  kept    ${p} (already there)\n`);
  io.stdout.write(`\nNext: set ANTHROPIC_API_KEY, then try: hearth chat -m "hello"\n`);
  return 0;
}

async function runChat(home: string, args: string[], io: Io): Promise<number> {
  const { values } = parse(args, { message: { type: "string", short: "m" } });
  const text = values.message;
  if (typeof text !== "string") throw new UsageError('chat needs a message for now: hearth chat -m "TEXT"');
  if (!text.trim()) throw new UsageError("The message is empty.");
  const config = loadConfig({ home });
  // A one-shot command keeps stderr for progress: only warnings, unless HEARTH_LOG says otherwise.
  const log = createLogger({ level: parseLevel(process.env.HEARTH_LOG, "warn") });
  return chatOnce(text, { config, home, log, io });
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
