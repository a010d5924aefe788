// `hearth chat -m TEXT`: one message to the owner's main session; the reply streams to stdout,
// tool progress and retries to stderr.
import type { AgentEvent, RunStatus } from "../agent/events.ts";
import { userTurn } from "../agent/user-turn.ts";
import { createAgentRuntime } from "../gateway/agent-runtime.ts";
import type { Config } from "../gateway/config.ts";
import { ensureHome } from "../gateway/init.ts";
import type { Logger } from "../log.ts";

export interface ChatIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Renders a run's events for a terminal: the reply on stdout, everything else on stderr. */
export function terminalRenderer(io: ChatIO): { onEvent: (e: AgentEvent) => void; finish: () => void } {
  let printed = "";
  return {
    onEvent(e) {
      switch (e.type) {
        case "text_delta":
          io.stdout.write(e.text);
          printed += e.text;
          break;
        case "text_reset":
          // Printed text cannot be taken back: say so, then print the new answer in full.
          io.stderr.write("\n(the answer restarted after a connection problem)\n");
          io.stdout.write(`\n${e.text}`);
          printed = e.text;
          break;
        case "tool_start":
          if (printed && !printed.endsWith("\n")) io.stdout.write("\n"), (printed += "\n");
          io.stderr.write(`→ ${e.name}${e.summary ? `: ${e.summary}` : ""}\n`);
          break;
        case "tool_end":
          if (!e.ok) io.stderr.write(`  ✗ ${e.name} failed\n`);
          break;
        case "model_retry":
          io.stderr.write(`(${e.error.message} Retrying in ${Math.ceil(e.delayMs / 1000)} s.)\n`);
          break;
        case "model_fallback":
          io.stderr.write(`(switching to the fallback model ${e.to})\n`);
          break;
        case "run_start":
        case "turn_start":
        case "turn_end":
        case "steered":
        case "run_end":
          break;
        default:
          e satisfies never;
      }
    },
    finish() {
      if (printed && !printed.endsWith("\n")) io.stdout.write("\n");
    },
  };
}

export function exitCodeFor(status: RunStatus): number {
  switch (status) {
    case "completed":
    case "max_turns":
    case "doom_loop":
      return 0;
    case "aborted":
      return 130;
    case "error":
      return 1;
  }
}

/** Runs one message in-process. Ctrl+C stops the run (and a second one the program). */
export async function chatOnce(text: string, ctx: { config: Config; home: string; log: Logger; io: ChatIO }): Promise<number> {
  const runtime = createAgentRuntime(ctx.config, ctx.home, ctx.log);
  ensureHome(ctx.home, { workspace: ctx.config.workspace });
  const abort = new AbortController();
  const onSigint = () => {
    if (abort.signal.aborted) process.exit(130);
    abort.abort();
  };
  process.on("SIGINT", onSigint);
  const render = terminalRenderer(ctx.io);
  try {
    const result = await runtime.run({
      key: "main",
      scope: "main",
      input: [userTurn({ text, channel: "cli", sender: "owner", at: Date.now(), timezone: ctx.config.timezone })],
      signal: abort.signal,
      emit: render.onEvent,
    });
    render.finish();
    return exitCodeFor(result.status);
  } finally {
    process.off("SIGINT", onSigint);
  }
}
