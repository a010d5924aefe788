// The log of a gateway embedded in `hearth chat`: it shares the terminal with the conversation,
// so it speaks in short sentences on stderr, never in JSON. Model fallbacks are an event a person
// waiting for an answer wants to hear about; a retry is said by the reply itself, as a note
// (ReplySink.modelRetrying), the same with a daemon or without.
import { formatFields, type LogFields, type LogFormat } from "../process/log.ts";

const WHY: Record<string, string> = {
  rate_limited: "is rate-limiting us",
  overloaded: "is overloaded",
  server: "had a server error",
  connection: "could not be reached",
  stalled: "stopped responding",
};

export const terminalLogFormat: LogFormat = (level, event, fields) => {
  switch (event) {
    case "model.retry":
      return null; // the reply's note says it (gateway/delivery/reply-fanout.ts)
    case "model.fallback":
      return `(the model ${why(fields)}; switching to ${String(fields.to)})\n`;
    case "model.failed":
      return null; // the reply itself says what went wrong
    case "web.search_unconfigured":
      // A setup note for the daemon's log and `hearth doctor`, not for every terminal message.
      return null;
    default:
      return level === "warn" || level === "error" ? `hearth: ${level === "warn" ? "warning" : "error"}: ${event}${formatFields(fields)}\n` : `${event}${formatFields(fields)}\n`;
  }
};

function why(fields: LogFields): string {
  const status = typeof fields.status === "number" ? ` (HTTP ${fields.status})` : "";
  return `${WHY[String(fields.kind)] ?? "did not answer"}${status}`;
}
