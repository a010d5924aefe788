// What the email channel remembers across restarts, in one small file of the home: where it
// stopped reading (the folder's UIDVALIDITY and the last UID handed to the gateway, written only
// once the gateway's inbox has the message) and, per thread, whom answers go to and what they
// reference. A crash between the inbox and this file delivers the mail again, and the inbox,
// which has it, drops the repeat: nothing is lost and nothing answered twice. It also remembers
// which mail each sender's Message-ID was first read as, so the same mail appended again (a
// replay of a signed mail keeps its valid signature) is not read a second time.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { NewerStateError } from "../../state/versions.ts";
import { setAsideDamaged, writeFileAtomic } from "../../state/storage.ts";

/** A conversation: the mails of one thread with one correspondent. */
export interface Thread {
  /** Where answers go: the correspondent's address (verified when it was recorded). */
  to: string;
  subject: string;
  /** The newest Message-ID of the thread (answers are In-Reply-To it) and the ones before it. */
  last: string;
  references: string[];
  at: number;
  /** UIDs of the correspondent's mails handed to the gateway and not yet marked seen: the next answer into the thread marks them. */
  unseen?: number[];
}

interface StateFile {
  version: number;
  folder: string;
  uidValidity: string | null;
  lastUid: number;
  threads: Record<string, Thread>;
  /** `<sender> <Message-ID>` → the mail it was read as (`<UIDVALIDITY>:<UID>`), oldest first. */
  read?: Record<string, string>;
}

/** Threads remembered; the oldest are forgotten first (an answer into one opens a new thread instead). */
const MAX_THREADS = 2_000;
const STATE_VERSION = 1;
const MAX_REFERENCES = 20;
/** Message-IDs remembered per mailbox (as many as the gateway's inbox remembers ids for). */
const MAX_READ = 5_000;

function readState(path: string): StateFile | "damaged" {
  try {
    const read = JSON.parse(readFileSync(path, "utf8")) as StateFile;
    const ok = typeof read === "object" && read !== null && typeof read.version === "number" && typeof read.lastUid === "number" && typeof read.threads === "object";
    return ok ? read : "damaged";
  } catch {
    return "damaged";
  }
}

export class MailState {
  readonly #path: string;
  #file: StateFile;
  /** Where a damaged file was set aside at start; undefined when it read. */
  readonly damagedCopy: string | undefined;

  constructor(home: string, folder: string) {
    this.#path = join(home, "email-state.json");
    this.#file = { version: STATE_VERSION, folder, uidValidity: null, lastUid: 0, threads: {} };
    if (existsSync(this.#path)) {
      const read = readState(this.#path);
      if (read === "damaged") {
        // Set aside for the owner to look at; reading starts from now (mail that came while it was
        // unreadable is not answered) and the threads' answers open new threads.
        this.damagedCopy = setAsideDamaged(this.#path);
      } else {
        if (read.version > STATE_VERSION) throw new NewerStateError(this.#path, read.version, STATE_VERSION);
        // Another folder is another UID space: its threads stay, its cursor starts anew.
        this.#file = read.folder === folder ? read : { ...read, folder, uidValidity: null, lastUid: 0 };
      }
    }
  }

  /**
   * Where to read from in a folder with `uidValidity` whose next UID is `uidNext`. The first
   * time (or when the server renumbered the folder) that is from now on: mail that was there
   * before Hearth watched it is not answered.
   */
  cursor(uidValidity: string, uidNext: number): { lastUid: number; fresh: boolean } {
    if (this.#file.uidValidity === uidValidity) return { lastUid: this.#file.lastUid, fresh: false };
    // The old UIDs name nothing in a renumbered folder.
    for (const t of Object.values(this.#file.threads)) delete t.unseen;
    this.#file = { ...this.#file, uidValidity, lastUid: Math.max(0, uidNext - 1) };
    this.#save();
    return { lastUid: this.#file.lastUid, fresh: true };
  }

  /** The mail `uid` is handled (the inbox has it, or it was dropped): it is not read again. */
  handled(uid: number): void {
    if (uid <= this.#file.lastUid) return;
    this.#file.lastUid = uid;
    this.#save();
  }

  thread(root: string): Thread | undefined {
    return this.#file.threads[root];
  }

  /** Records the newest mail of thread `root` (from the correspondent, or an answer sent into it). */
  noteMail(root: string, t: { to: string; subject: string; messageId: string; references: string[]; uid?: number }): void {
    const refs = [...new Set([...t.references, t.messageId])];
    // The root and the newest ones: enough for every client to thread it.
    const references = refs.length > MAX_REFERENCES ? [refs[0]!, ...refs.slice(-(MAX_REFERENCES - 1))] : refs;
    const unseen = [...(this.#file.threads[root]?.unseen ?? []), ...(t.uid !== undefined ? [t.uid] : [])];
    this.#file.threads[root] = { to: t.to, subject: t.subject, last: t.messageId, references, at: Date.now(), ...(unseen.length > 0 ? { unseen } : {}) };
    const roots = Object.keys(this.#file.threads);
    if (roots.length > MAX_THREADS) {
      const oldest = roots.sort((a, b) => this.#file.threads[a]!.at - this.#file.threads[b]!.at).slice(0, roots.length - MAX_THREADS);
      for (const r of oldest) delete this.#file.threads[r];
    }
    this.#save();
  }

  /**
   * Whether the vouched-for mail `uid` of `sender` carries a Message-ID that an earlier mail of
   * theirs had: a replay. Otherwise it is recorded as that mail (written before this returns);
   * the same mail read again (after a restart) is not a replay.
   */
  replayed(sender: string, messageId: string, uid: number): boolean {
    const key = `${sender} ${messageId}`;
    const as = `${this.#file.uidValidity ?? ""}:${uid}`;
    const read = (this.#file.read ??= {});
    const before = read[key];
    if (before !== undefined) return before !== as;
    read[key] = as;
    const keys = Object.keys(read);
    for (const k of keys.slice(0, Math.max(0, keys.length - MAX_READ))) delete read[k];
    this.#save();
    return false;
  }

  /** `uids` of thread `root` are marked seen on the server. */
  markedSeen(root: string, uids: number[]): void {
    const t = this.#file.threads[root];
    if (!t?.unseen) return;
    const left = t.unseen.filter((u) => !uids.includes(u));
    if (left.length > 0) t.unseen = left;
    else delete t.unseen;
    this.#save();
  }

  #save(): void {
    writeFileAtomic(this.#path, `${JSON.stringify(this.#file)}\n`, 0o600, { sync: true });
  }
}
