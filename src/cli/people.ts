// `hearth people list | add | link | unlink | set | remove`: the household. Through the daemon
// when it runs (its registry answers the next message), directly on people.json and the
// workspace otherwise. Every channel's flag (`--telegram ID`, `--whatsapp NUMBER`, …) comes from
// the channel registry. Naming an account here is the owner's approval that it is that person's.
import { CONFIGURABLE_IDS } from "../channels/registry.ts";
import { loadConfig } from "../config/config.ts";
import { homePaths } from "../config/home.ts";
import { describeDamaged, listDamaged } from "../gateway/upkeep/damaged-state.ts";
import { addPerson, changePerson, linkAccounts, ownerAccountsOf, removePerson, unlinkAccounts, type Added, type Removed } from "../people/household.ts";
import { accountOf, checkDailyUsd, checkName, describeTools, parseTools, PeopleError, type Person, type PersonTools } from "../people/person.ts";
import { PeopleRegistry } from "../people/registry.ts";
import { createLogger } from "../process/log.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { usdText } from "../spending/spending-text.ts";
import { parse, UsageError } from "./args.ts";
import { connectDaemon } from "./client.ts";

interface PeopleIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const CHANNEL_FLAGS = Object.fromEntries(CONFIGURABLE_IDS.map((id) => [id, { type: "string", multiple: true }] as const)) as Record<(typeof CONFIGURABLE_IDS)[number], { type: "string"; multiple: true }>;

export type PeopleAction =
  | { action: "list"; json: boolean }
  | { action: "add"; name: string; accounts: string[]; dailyUsd?: number; tools?: PersonTools }
  | { action: "link" | "unlink"; name: string; accounts: string[] }
  | { action: "set"; name: string; dailyUsd?: number | null; tools?: PersonTools }
  | { action: "remove"; name: string; deleteFiles: boolean };

/** Checks the command line (names, accounts, budgets, tools); throws UsageError. Opens nothing. */
export function parsePeople(args: string[]): PeopleAction {
  const [action, ...rest] = args;
  try {
    switch (action) {
      case "list": {
        const { values } = parse(rest, { json: { type: "boolean" } });
        return { action: "list", json: values.json === true };
      }
      case "add": {
        const { values, positionals } = parse(rest, { ...CHANNEL_FLAGS, budget: { type: "string" }, allow: { type: "string" } }, true);
        const name = oneName(positionals, action);
        const accounts = accountsOf(values);
        if (accounts.length === 0) throw new UsageError(`people add needs at least one account: people add ${name} ${CONFIGURABLE_IDS.map((id) => `--${id} ID`).slice(0, 2).join(" | ")} | …`);
        return { action: "add", name, accounts, ...(values.budget !== undefined ? { dailyUsd: budgetOf(values.budget, false)! } : {}), ...(values.allow !== undefined ? { tools: parseTools(values.allow) } : {}) };
      }
      case "link":
      case "unlink": {
        const { values, positionals } = parse(rest, CHANNEL_FLAGS, true);
        const name = oneName(positionals, action);
        const accounts = accountsOf(values);
        if (accounts.length === 0) throw new UsageError(`people ${action} needs the account: people ${action} ${name} --CHANNEL ID (CHANNEL one of ${CONFIGURABLE_IDS.join(", ")}).`);
        return { action, name, accounts };
      }
      case "set": {
        const { values, positionals } = parse(rest, { budget: { type: "string" }, allow: { type: "string" } }, true);
        const name = oneName(positionals, action);
        if (values.budget === undefined && values.allow === undefined) throw new UsageError(`people set needs what to change: people set ${name} [--budget USD|none] [--allow web,exec,files,mcp:SERVER|none]`);
        return { action: "set", name, ...(values.budget !== undefined ? { dailyUsd: budgetOf(values.budget, true) } : {}), ...(values.allow !== undefined ? { tools: parseTools(values.allow) } : {}) };
      }
      case "rm":
      case "remove": {
        const { values, positionals } = parse(rest, { "delete-files": { type: "boolean" } }, true);
        return { action: "remove", name: oneName(positionals, "remove"), deleteFiles: values["delete-files"] === true };
      }
      default:
        throw new UsageError(action ? `Unknown people action "${action}". Use list, add, link, unlink, set or remove.` : "people needs an action: list, add, link, unlink, set or remove.");
    }
  } catch (err) {
    if (err instanceof PeopleError) throw new UsageError(err.message);
    throw err;
  }
}

function oneName(positionals: string[], action: string): string {
  if (positionals.length !== 1) throw new UsageError(`people ${action} needs exactly one name: people ${action} NAME …`);
  return checkName(positionals[0]!);
}

function accountsOf(values: Record<string, unknown>): string[] {
  return CONFIGURABLE_IDS.flatMap((id) => ((values[id] as string[] | undefined) ?? []).map((userId) => accountOf(id, userId)));
}

function budgetOf(text: string, noneAllowed: boolean): number | null {
  if (noneAllowed && text === "none") return null;
  const usd = Number(text.replace(/^\$/, ""));
  if (text.trim() === "" || Number.isNaN(usd)) throw new UsageError(`--budget takes dollars a day, e.g. --budget 2 or --budget 0.50${noneAllowed ? ', or "none"' : ""} (got "${text}").`);
  return checkDailyUsd(usd);
}

export async function runPeople(home: string, args: string[], io: PeopleIO): Promise<number> {
  const cmd = parsePeople(args);
  const call = await peopleCall(home);
  try {
    switch (cmd.action) {
      case "list": {
        const people = (await call.rpc("people.list", {})) as Person[];
        io.stdout.write(cmd.json ? `${JSON.stringify(people, null, 2)}\n` : formatPeople(people));
        for (const d of listDamaged(home).filter((x) => x.file === "people.json")) io.stderr.write(`Note: ${describeDamaged(d)}.\n`);
        return 0;
      }
      case "add": {
        const { person } = (await call.rpc("people.add", { name: cmd.name, accounts: cmd.accounts, ...(cmd.dailyUsd !== undefined ? { dailyUsd: cmd.dailyUsd } : {}), ...(cmd.tools ? { tools: cmd.tools } : {}) })) as Added;
        io.stdout.write(`Added ${person.name} (${person.accounts.join(", ")}): their private chats with Hearth are one conversation of their own, with their memory in people/${person.name}/.\n${limitsLine(person)}\n`);
        if (!call.daemon) io.stdout.write(`Hearth is not running: it answers them once it is started (${hearthCmd("start")}).\n`);
        return 0;
      }
      case "link": {
        const p = (await call.rpc("people.link", { name: cmd.name, accounts: cmd.accounts })) as Person;
        io.stdout.write(`Linked ${cmd.accounts.join(", ")} to ${p.name} (now: ${p.accounts.join(", ")}).\n`);
        return 0;
      }
      case "unlink": {
        const p = (await call.rpc("people.unlink", { name: cmd.name, accounts: cmd.accounts })) as Person;
        io.stdout.write(`Unlinked ${cmd.accounts.join(", ")} from ${p.name} (now: ${p.accounts.join(", ") || "no account"}).\n`);
        return 0;
      }
      case "set": {
        const p = (await call.rpc("people.set", { name: cmd.name, ...(cmd.dailyUsd !== undefined ? { dailyUsd: cmd.dailyUsd } : {}), ...(cmd.tools ? { tools: cmd.tools } : {}) })) as Person;
        io.stdout.write(`Changed ${p.name}. ${limitsLine(p)}\n`);
        return 0;
      }
      case "remove": {
        const r = (await call.rpc("people.remove", { name: cmd.name, deleteFiles: cmd.deleteFiles })) as Removed;
        io.stdout.write(
          r.deleted
            ? `Removed ${r.person.name} from the household and deleted ${r.space}/.\n`
            : `Removed ${r.person.name} from the household. Their files stay in ${r.space}/ in the workspace${cmd.deleteFiles ? " (there were none)" : ""}.\n`,
        );
        return 0;
      }
      default:
        cmd satisfies never;
        return 2;
    }
  } finally {
    await call.close();
  }
}

/** "Budget: $2.00 a day. Tools: web, exec." */
function limitsLine(p: Person): string {
  const budget = p.dailyUsd === undefined ? "none of their own (the shared chats' daily limit applies)" : `${usdText(p.dailyUsd)} a day`;
  return `Budget: ${budget}. Tools: ${describeTools(p.tools)}.`;
}

export function formatPeople(people: Person[]): string {
  if (people.length === 0) return `No people in the household. Add one with: ${hearthCmd("people add NAME --telegram ID")}\n`;
  return people.map((p) => `${p.name}  ${p.accounts.join(", ") || "(no account)"}\n    ${limitsLine(p)}\n`).join("");
}

interface PeopleCall {
  daemon: boolean;
  rpc(method: string, params: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

/** The running daemon's people methods, or the same operations on the files when none answers. */
async function peopleCall(home: string): Promise<PeopleCall> {
  const paths = homePaths(home);
  const daemon = await connectDaemon(paths.socket);
  if (daemon) return { daemon: true, rpc: (m, p) => daemon.rpc(m, p), close: () => daemon.close() };
  const config = loadConfig({ home });
  const deps = { people: PeopleRegistry.open(paths.people, createLogger({ level: "warn" })), workspace: config.workspace, owners: ownerAccountsOf(config.channels) };
  const p = (params: Record<string, unknown>) => params as { name: string; accounts: string[]; dailyUsd?: number | null; tools?: PersonTools; deleteFiles?: boolean };
  return {
    daemon: false,
    close: async () => {},
    rpc: async (method, params) => {
      const a = p(params);
      switch (method) {
        case "people.list":
          return deps.people.list();
        case "people.add":
          return addPerson(deps, { name: a.name, accounts: a.accounts, ...(typeof a.dailyUsd === "number" ? { dailyUsd: a.dailyUsd } : {}), ...(a.tools ? { tools: a.tools } : {}) });
        case "people.link":
          return linkAccounts(deps, a.name, a.accounts);
        case "people.unlink":
          return unlinkAccounts(deps, a.name, a.accounts);
        case "people.set":
          return changePerson(deps, a.name, { ...(a.dailyUsd !== undefined ? { dailyUsd: a.dailyUsd } : {}), ...(a.tools ? { tools: a.tools } : {}) });
        case "people.remove":
          return removePerson(deps, a.name, a.deleteFiles === true);
        default:
          throw new Error(`unknown method ${method}`);
      }
    },
  };
}
