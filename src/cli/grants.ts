// `hearth grants [--log] | grants revoke N`: what the owner allowed for a while or always, and
// the audit log of every approval decision. Works on grants.json and approvals.jsonl directly:
// a running daemon reads grants.json again before every use, so a revoke takes effect at once.
import path from "node:path";
import { auditLine, AuditLog } from "../approvals/audit.ts";
import { GrantStore, grantLines, grantText } from "../approvals/grants.ts";
import { loadConfig } from "../config/config.ts";
import { systemTimeZone } from "../fields/config-fields.ts";
import { createLogger } from "../process/log.ts";
import { parse, UsageError } from "./args.ts";

interface GrantsIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** How many decisions `--log` shows, newest last. */
const LOG_LINES = 50;

export type GrantsAction = { action: "list" } | { action: "log" } | { action: "revoke"; n: number };

/** Checks the command line; throws UsageError. Touches nothing. */
export function parseGrants(args: string[]): GrantsAction {
  const { values, positionals } = parse(args, { log: { type: "boolean" } }, true);
  const [action, arg, ...extra] = positionals;
  if (values.log) {
    if (action !== undefined) throw new UsageError(`grants --log takes no argument (got "${action}").`);
    return { action: "log" };
  }
  if (action === undefined) return { action: "list" };
  if (action !== "revoke") throw new UsageError(`Unknown grants action "${action}". Use grants, grants revoke N or grants --log.`);
  if (!arg || !/^\d+$/.test(arg) || Number(arg) < 1) throw new UsageError("grants revoke needs the grant's number, as `grants` lists it: grants revoke N");
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);
  return { action: "revoke", n: Number(arg) };
}

export function runGrants(home: string, args: string[], io: GrantsIO): number {
  const cmd = parseGrants(args);
  const log = createLogger({ level: "error" });
  const timezone = timezoneOf(home);
  const grants = new GrantStore(path.join(home, "grants.json"), log, Date.now);
  switch (cmd.action) {
    case "list": {
      const lines = grantLines(grants.active(), Date.now(), timezone);
      io.stdout.write(lines.length === 0 ? "No grants.\n" : `${lines.join("\n")}\n`);
      return 0;
    }
    case "revoke": {
      const gone = grants.revoke(cmd.n);
      if (!gone) {
        io.stderr.write(`hearth: there is no grant ${cmd.n}; \`grants\` lists them with their numbers.\n`);
        return 1;
      }
      io.stdout.write(`Revoked: ${grantText(gone)}.\n`);
      return 0;
    }
    case "log": {
      const records = new AuditLog(path.join(home, "approvals.jsonl"), log).read().slice(-LOG_LINES);
      io.stdout.write(records.length === 0 ? "No approval decisions yet.\n" : `${records.map((r) => auditLine(r, timezone)).join("\n")}\n`);
      return 0;
    }
  }
}

/** The owner's time zone from config.json; the system's when it cannot be read (the listing still works). */
function timezoneOf(home: string): string {
  try {
    return loadConfig({ home }).timezone;
  } catch {
    return systemTimeZone();
  }
}
