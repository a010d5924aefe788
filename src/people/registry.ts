// The household's people: <home>/people.json, read and written through state/storage.ts (a
// schema, versions, atomic replacement, a damaged file set aside, never overwritten). Every
// lookup first checks whether the file changed on disk (one stat), so the file the CLI or the
// owner edited while the daemon runs is what decides the next message.
import { statSync } from "node:fs";
import { z } from "zod";
import { hearthCmd } from "../process/hearth-command.ts";
import type { Logger } from "../process/log.ts";
import { loadJsonFile, writeFileAtomic, type Salvaged, type StateVersions } from "../state/storage.ts";
import { accountOf, checkDailyUsd, checkName, NO_TOOLS, PeopleError, personSchema, type Person, type PersonTools } from "./person.ts";

interface PeopleFile {
  version: 1;
  people: Person[];
}

/** people.json's format versions: 1 is the first. */
const PEOPLE_VERSIONS: StateVersions = { current: 1, steps: [] };

/** The problems of a list of people that are valid one by one: a name or an account given twice. */
function conflictsOf(people: readonly Person[]): string[] {
  const names = new Set<string>();
  const accounts = new Map<string, string>();
  const problems: string[] = [];
  for (const p of people) {
    if (names.has(p.name)) problems.push(`${p.name} is listed twice`);
    names.add(p.name);
    for (const a of p.accounts) {
      const holder = accounts.get(a);
      if (holder !== undefined && holder !== p.name) problems.push(`${a} is listed for both ${holder} and ${p.name}`);
      else accounts.set(a, p.name);
    }
  }
  return problems;
}

const peopleFileSchema: z.ZodType<PeopleFile> = z
  .object({ version: z.literal(1), people: z.array(personSchema) })
  .superRefine((f, ctx) => {
    for (const message of conflictsOf(f.people)) ctx.addIssue({ code: "custom", message, path: ["people"] });
  }) as z.ZodType<PeopleFile>;

/** Keeps each person that validates and conflicts with nobody kept before them; names the rest. */
function salvagePeople(raw: unknown): Salvaged<PeopleFile> | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (!Array.isArray(r.people)) return null;
  const kept: Person[] = [];
  const dropped: string[] = [];
  for (const [i, item] of r.people.entries()) {
    const parsed = personSchema.safeParse(item);
    if (!parsed.success) {
      dropped.push(`people[${i}]: ${z.prettifyError(parsed.error).replace(/\n\s*/g, " ")}`);
      continue;
    }
    const conflict = conflictsOf([...kept, parsed.data]);
    if (conflict.length > 0) dropped.push(`people[${i}]: ${conflict[0]}`);
    else kept.push(parsed.data);
  }
  if (r.version !== 1) dropped.push(`version: expected 1, found ${JSON.stringify(r.version)}`);
  return { value: { version: 1, people: kept }, dropped };
}

/** What a new person is given: accounts as `channel:userId` (accountOf checked them), budget and tools optional. */
export interface NewPerson {
  name: string;
  accounts: string[];
  dailyUsd?: number;
  tools?: PersonTools;
}

/** The accounts that are the owner's on each channel (config's ownerIds): never a person's. */
export type OwnerAccounts = (channel: string) => readonly string[];

export class PeopleRegistry {
  readonly #path: string;
  readonly #log: Logger;
  readonly #clock: () => number;
  #data: PeopleFile = { version: 1, people: [] };
  /** The file as last read or written (size, mtime, inode); null: missing. */
  #seen: string | null = null;

  private constructor(path: string, log: Logger, clock: () => number) {
    this.#path = path;
    this.#log = log;
    this.#clock = clock;
  }

  /**
   * Reads people.json; a missing file is an empty household (a home from before people works
   * as it did). A damaged one is set aside as `people.json.damaged-<time>` and what validated is
   * kept. Throws NewerStateError for a file a newer Hearth wrote.
   */
  static open(path: string, log: Logger, clock: () => number = Date.now): PeopleRegistry {
    const r = new PeopleRegistry(path, log, clock);
    r.#load();
    return r;
  }

  list(): Person[] {
    this.#fresh();
    return this.#data.people.map((p) => structuredClone(p));
  }

  get(name: string): Person | null {
    this.#fresh();
    const p = this.#data.people.find((x) => x.name === name);
    return p ? structuredClone(p) : null;
  }

  /** The person whose account `channel:userId` is; null for none. */
  personOf(channel: string, userId: string): Person | null {
    this.#fresh();
    const account = `${channel}:${userId}`;
    const p = this.#data.people.find((x) => x.accounts.includes(account));
    return p ? structuredClone(p) : null;
  }

  /** Adds a person; throws PeopleError for a bad name, a name taken, an account that is the owner's or someone else's. */
  add(input: NewPerson, owners: OwnerAccounts): Person {
    this.#fresh();
    const name = checkName(input.name);
    if (this.#data.people.some((p) => p.name === name)) throw new PeopleError(`${name} is already in the household; \`${hearthCmd(`people link ${name} --CHANNEL ID`)}\` adds an account.`);
    if (input.accounts.length === 0) throw new PeopleError(`${name} needs at least one account, e.g. --telegram 123456789.`);
    const accounts = this.#claimable(name, input.accounts, owners);
    const person: Person = {
      name,
      accounts,
      ...(input.dailyUsd !== undefined ? { dailyUsd: checkDailyUsd(input.dailyUsd) } : {}),
      tools: structuredClone(input.tools ?? NO_TOOLS),
      addedAt: this.#clock(),
    };
    this.#save({ version: 1, people: [...this.#data.people, person] });
    return structuredClone(person);
  }

  /** Adds accounts to person `name`; the same checks as add. Returns the person as saved. */
  link(name: string, accounts: string[], owners: OwnerAccounts): Person {
    const p = this.#existing(name);
    if (accounts.length === 0) throw new PeopleError(`Name the account to link, e.g. people link ${name} --whatsapp +4915112345678.`);
    const added = this.#claimable(name, accounts, owners).filter((a) => !p.accounts.includes(a));
    return this.#replace({ ...p, accounts: [...p.accounts, ...added] });
  }

  /** Takes accounts from person `name`; one they do not have is an error. Returns the person as saved. */
  unlink(name: string, accounts: string[]): Person {
    const p = this.#existing(name);
    if (accounts.length === 0) throw new PeopleError(`Name the account to unlink, e.g. people unlink ${name} --telegram 1002.`);
    for (const a of accounts) if (!p.accounts.includes(a)) throw new PeopleError(`${a} is not ${name}'s (theirs: ${p.accounts.join(", ") || "none"}).`);
    return this.#replace({ ...p, accounts: p.accounts.filter((a) => !accounts.includes(a)) });
  }

  /** Changes a person's budget (null: none of their own) and tools; absent fields stay. */
  set(name: string, change: { dailyUsd?: number | null; tools?: PersonTools }): Person {
    const p = this.#existing(name);
    const next: Person = { ...p, ...(change.tools ? { tools: structuredClone(change.tools) } : {}) };
    if (change.dailyUsd === null) delete next.dailyUsd;
    else if (change.dailyUsd !== undefined) next.dailyUsd = checkDailyUsd(change.dailyUsd);
    return this.#replace(next);
  }

  /** Removes person `name` from the household (their files are the caller's business); returns who it was. */
  remove(name: string): Person {
    const p = this.#existing(name);
    this.#save({ version: 1, people: this.#data.people.filter((x) => x.name !== p.name) });
    return p;
  }

  #existing(name: string): Person {
    this.#fresh();
    const p = this.#data.people.find((x) => x.name === name);
    if (!p) {
      const names = this.#data.people.map((x) => x.name);
      throw new PeopleError(`No person named ${JSON.stringify(name)} in the household${names.length ? ` (there are: ${names.join(", ")})` : ""}; \`${hearthCmd("people list")}\` shows them.`);
    }
    return structuredClone(p);
  }

  #replace(person: Person): Person {
    this.#save({ version: 1, people: this.#data.people.map((x) => (x.name === person.name ? person : x)) });
    return structuredClone(person);
  }

  /** `accounts` checked and deduplicated; none may be the owner's or another person's. */
  #claimable(name: string, accounts: string[], owners: OwnerAccounts): string[] {
    const out: string[] = [];
    for (const raw of accounts) {
      const at = raw.indexOf(":");
      const account = accountOf(raw.slice(0, Math.max(0, at)), raw.slice(at + 1));
      const [channel, userId] = [account.slice(0, account.indexOf(":")), account.slice(account.indexOf(":") + 1)];
      if (owners(channel).includes(userId)) throw new PeopleError(`${account} is yours (channels.${channel}.ownerIds): your own accounts are the owner's, never a person's.`);
      const holder = this.#data.people.find((p) => p.accounts.includes(account));
      if (holder && holder.name !== name) throw new PeopleError(`${account} is already ${holder.name}'s; an account belongs to one person. Unlink it first: \`${hearthCmd(`people unlink ${holder.name} --${channel} ${userId}`)}\`.`);
      if (!out.includes(account)) out.push(account);
    }
    return out;
  }

  #load(): void {
    const loaded = loadJsonFile(this.#path, { schema: peopleFileSchema, log: this.#log, versions: PEOPLE_VERSIONS, salvage: salvagePeople, now: this.#clock() });
    this.#data = loaded.status === "ok" ? loaded.value : { version: 1, people: [] };
    this.#seen = signature(this.#path);
  }

  /** Re-reads the file when it changed since it was last read or written. */
  #fresh(): void {
    if (signature(this.#path) !== this.#seen) this.#load();
  }

  #save(data: PeopleFile): void {
    writeFileAtomic(this.#path, `${JSON.stringify(data, null, 1)}\n`);
    this.#data = data;
    this.#seen = signature(this.#path);
  }
}

function signature(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return null;
  }
}
