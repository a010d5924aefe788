// `hearth status [--json]`: asks the running daemon; says so plainly when none runs.
import { hearthCmd } from "../process/hearth-command.ts";
import { homePaths } from "../config/home.ts";
import { liveHolder } from "../gateway/upkeep/lock.ts";
import { formatDuration, formatTokens, mcpDownLines, type GatewayStatus } from "../gateway/status.ts";
import { connectDaemon } from "./client.ts";
import { spendingLine } from "../spending/spending-text.ts";

interface StatusIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runStatus(home: string, json: boolean, io: StatusIO): Promise<number> {
  const paths = homePaths(home);
  const client = await connectDaemon(paths.socket);
  if (!client) {
    const holder = liveHolder(paths.lock);
    const note = holder ? ` A process (pid ${holder.pid}) holds the lock but does not answer on ${paths.socket}.` : "";
    if (json) io.stdout.write(`${JSON.stringify({ running: false })}\n`);
    io.stderr.write(`Hearth is not running on ${home}.${note} Start it with: ${hearthCmd("start")}\n`);
    return 1;
  }
  try {
    const status = await client.status();
    io.stdout.write(json ? `${JSON.stringify({ running: true, ...status }, null, 2)}\n` : formatStatus(status));
    return 0;
  } finally {
    await client.close();
  }
}

export function formatStatus(s: GatewayStatus, now = Date.now()): string {
  const lines = [`Hearth is running (pid ${s.pid}, up ${formatDuration(now - s.startedAt)}) · model ${s.model}`, `Commands (exec): ${s.execSandbox.detail}`, ""];
  lines.push("Channels:");
  for (const c of s.channels) {
    const detail =
      c.state === "failed"
        ? `not running: ${c.reason}`
        : c.state === "reconnecting"
          ? `reconnecting: ${c.detail}`
          : c.state === "running" && c.detail
            ? `running (${c.detail})`
            : c.state === "starting" && c.link
              ? `waiting to be linked: ${c.link.how === "code" ? `type ${c.link.code} on the phone (Linked devices → Link with phone number instead)` : "scan the QR code on the dashboard's overview (or the log's pairing_qr line)"}`
              : c.state;
    lines.push(`  ${c.id.padEnd(10)} ${detail}`);
  }
  lines.push("", "Sessions:");
  if (s.sessions.length === 0) lines.push("  (none yet)");
  const width = Math.max(10, ...s.sessions.map((x) => x.key.length));
  for (const x of s.sessions) {
    // A run held by an approval is not working: it waits for the owner.
    const activity = x.waitingFor ? `waiting for your approval (${x.waitingFor})` : x.running ? `answering ${formatDuration(x.runningForMs ?? 0)}` : "idle";
    const queued = x.queued ? ` · ${x.queued} queued` : "";
    const fill = x.contextPercent >= 80 ? " (compacts before the next call)" : x.contextPercent >= 60 ? " (getting full)" : "";
    lines.push(`  ${x.key.padEnd(width)}  ${x.scope.padEnd(6)}  model ${x.model ?? s.model}  last ${formatDuration(now - x.lastActivityAt)} ago  context ${x.contextPercent}%${fill}  ${activity}${queued}`);
  }
  const t = s.today;
  lines.push(
    "",
    `Today (${t.date}): ${t.runs} runs · ${formatTokens(t.inputTokens + t.cacheReadTokens + t.cacheCreationTokens)} tokens in (${formatTokens(t.cacheReadTokens)} from cache) · ${formatTokens(t.outputTokens)} out · ≈ $${t.costUsd.toFixed(2)}`,
  );
  if (s.budget) lines.push(spendingLine(s.budget));
  if (s.damaged?.length) lines.push("", ...s.damaged.map((d) => `Damaged state: ${d}`));
  const waiting = s.terminalMailbox ?? 0;
  if (waiting > 0) lines.push("", `Terminal: ${waiting === 1 ? "1 message waits" : `${waiting} messages wait`}; \`${hearthCmd("chat")}\` shows ${waiting === 1 ? "it" : "them"}.`);
  const down = mcpDownLines(s.mcp ?? []);
  if (down.length) lines.push("", ...down);
  if (s.dashboard) lines.push("", `Dashboard: ${s.dashboard} (\`${hearthCmd("dashboard")}\` prints a login link)`);
  return `${lines.join("\n")}\n`;
}
