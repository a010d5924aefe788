// The `hearth` command. Exit codes: 0 success, 1 runtime failure, 2 bad usage or configuration.
import { chatInteractive, chatOnce, openClient } from "./cli/chat.ts";
import { parse, UsageError } from "./cli/args.ts";
import { CRON_USAGE, runCron } from "./cli/cron.ts";
import { runDoctor } from "./cli/doctor.ts";
import { runPairing } from "./cli/pairing.ts";
import { runStart } from "./cli/start.ts";
import { runStatus } from "./cli/status.ts";
import { SandboxUnavailableError } from "./agent/tools/sandbox.ts";
import { MissingApiKeyError } from "./gateway/agent-runtime.ts";
import { ConfigError } from "./gateway/config.ts";
import { resolveHome } from "./gateway/home.ts";
import { initHome } from "./gateway/init.ts";
import { LockHeldError } from "./gateway/lock.ts";
import { MAX_MESSAGE_CHARS, tooLongText } from "./gateway/router.ts";

const USAGE = `Usage: hearth <command> [options]

Commands:
  start                        run the gateway in the foreground (pm2 runs this)
  chat                         talk with Hearth in this terminal (your main session)
  chat -m "TEXT"               send one message; the reply streams to stdout
  status [--json]              channels, sessions, active runs, queues, today's tokens
  doctor [--online]            check the setup; one line per check, with a fix for each problem
                               (--online: also try each model provider: key, model, tool calling)
  init                         create the home folder, a commented config.json and the workspace
${CRON_USAGE}  pairing list                 pending pairing codes and approved senders
  pairing approve CODE         let the person who got CODE talk to Hearth
  pairing revoke CHANNEL:USERID

Environment:
  HEARTH_HOME          the home folder (default ~/.hearth)
  ANTHROPIC_API_KEY    the model API key (or model.apiKey in config.json)
  ANTHROPIC_BASE_URL   another Messages API endpoint (a proxy)
  OPENAI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY   keys of those providers
  TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN   channel tokens
  HEARTH_LOG           log level: debug, info, warn or error
`;

export interface Io {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function main(argv: string[], io: Io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const [command, ...rest] = argv;
  const home = resolveHome();
  try {
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
    if (err instanceof ConfigError || err instanceof MissingApiKeyError || err instanceof LockHeldError || err instanceof SandboxUnavailableError) {
      io.stderr.write(`hearth: ${err.message}\n`);
      return 2;
    }
    io.stderr.write(`hearth: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

function runInit(home: string, io: Io): number {
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
  if (text !== undefined && !text.trim()) throw new UsageError("The message is empty.");
  if (text !== undefined && text.length > MAX_MESSAGE_CHARS) throw new UsageError(tooLongText(text.length));
  const client = await openClient(home, io.stderr);
  try {
    return text !== undefined ? await chatOnce(client, text, io) : await chatInteractive(client, io);
  } finally {
    await client.close();
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
