// `hearth heartbeat --now`: one heartbeat tick through the running daemon, reported instead of
// delivered, so the owner can try out HEARTBEAT.md. Only the daemon runs the heartbeat.
import { homePaths } from "../config/home.ts";
import type { TickReport } from "../scheduler/heartbeat.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { parse, UsageError } from "./args.ts";
import { connectDaemon } from "./client.ts";

interface HeartbeatIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runHeartbeat(home: string, args: string[], io: HeartbeatIO): Promise<number> {
  const { values } = parse(args, { now: { type: "boolean" } });
  if (values.now !== true) throw new UsageError("heartbeat needs --now.");
  const daemon = await connectDaemon(homePaths(home).socket);
  if (!daemon) {
    io.stderr.write(`hearth: Hearth is not running on ${home}, and only the daemon runs the heartbeat. Start it with: ${hearthCmd("start")}\n`);
    return 1;
  }
  try {
    const report = (await daemon.rpc("heartbeat.now", {})) as TickReport;
    io.stdout.write(formatTickReport(report));
    return report.kind === "failed" ? 1 : 0;
  } finally {
    await daemon.close();
  }
}

export function formatTickReport(r: TickReport): string {
  switch (r.kind) {
    case "skipped":
      return `The heartbeat did not run: ${r.detail}.\n`;
    case "quiet":
      return `The heartbeat would stay quiet (the model answered HEARTBEAT_OK).\n${scheduledNote(r.scheduled)}`;
    case "message":
      return `The heartbeat would send this to ${r.to} (not sent):\n\n${r.text}\n${r.scheduled ? `\n${scheduledNote(r.scheduled)}` : ""}`;
    case "failed":
      return `The heartbeat run failed: ${r.text}\n`;
    default:
      return r satisfies never;
  }
}

const scheduledNote = (why: string | null): string => (why ? `A scheduled heartbeat would not run now: ${why}.\n` : "");
