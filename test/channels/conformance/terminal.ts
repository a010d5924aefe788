// The terminal as a fake platform: real `hearth chat` processes on the daemon's control socket.
// The owner is the only person and the owner's DM the only chat. Each message is one
// `hearth chat -m` (its stdout is the answer, exactly); beside them one interactive `hearth chat`
// stays open, as the owner's terminal window would: it shows the approval questions (answered by
// typing the choice's number) and the answers whose own client went away. Losing the connection
// is a client dying mid-answer (its socket closes); the answer then reaches the open window.
import { channelDescriptor } from "../../../src/channels/registry.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hearthBin, repoRoot } from "../../support/cli-process.ts";
import { waitFor, type Daemon } from "../../support/daemon.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits } from "./platform.ts";

export const TERMINAL_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("cli")!.capabilities,
  holdsDeliveries: false,
  sameAfterCrash: "a terminal client is a connection to the daemon itself: the crash ends it, and it shows an answer cut off as interrupted",
  privateChatsGrow: "the terminal is the owner's alone: nobody can join it",
};

const OWNER: Person = { role: "owner", id: "terminal", name: "you" };

/** A `hearth chat` process and what it printed, with when each piece arrived (for ordering). */
interface Client {
  n: number;
  child: ChildProcess;
  stdout: string;
  stderr: string;
  /** [end offset, arrival order] of each stdout / stderr chunk. */
  outChunks: Array<[number, number]>;
  errChunks: Array<[number, number]>;
  exit: { code: number | null; signal: string | null } | undefined;
  exited: Promise<void>;
  /** Killed by the platform (a lost connection, a replaced window). */
  cut: boolean;
}

/** A message with the order in which it first appeared. */
type Placed = BotMessage & { order: number };

const LETTER = /^── while no terminal was open: .* ──$/;
const LATE_ANSWER = /^\((?:the answer to ".*"|an answer), which came after its chat closed\)$/;
const CHOICES = /^((?:\[\d\] .+?)(?: {2}\[\d\] .+?)*) — (?:type|press) /;

export async function startTerminalPlatform(): Promise<FakePlatform> {
  const files = mkdtempSync(join(tmpdir(), "hearth-conformance-files-"));
  let daemon: Daemon | undefined;
  let order = 0;
  const oneShots: Client[] = [];
  const windows: Client[] = [];

  const run = (args: string[], stdin: "pipe" | "ignore"): Client => {
    const child = spawn(process.execPath, [hearthBin, ...args], { env: daemon!.env, cwd: repoRoot, stdio: [stdin, "pipe", "pipe"] });
    const c: Client = { n: oneShots.length + windows.length, child, stdout: "", stderr: "", outChunks: [], errChunks: [], exit: undefined, exited: Promise.resolve(), cut: false };
    child.stdout!.on("data", (d: Buffer) => {
      c.stdout += d.toString();
      c.outChunks.push([c.stdout.length, ++order]);
    });
    child.stderr!.on("data", (d: Buffer) => {
      c.stderr += d.toString();
      c.errChunks.push([c.stderr.length, ++order]);
    });
    c.exited = new Promise((resolve) =>
      child.on("close", (code, signal) => {
        c.exit = { code, signal };
        resolve();
      }),
    );
    return c;
  };
  const arrival = (chunks: Array<[number, number]>, offset: number) => chunks.find(([end]) => end > offset)?.[1] ?? order;
  const alive = (c: Client) => c.exit === undefined;

  /** A one-shot client's answer: what it printed; interrupted when the client died before the answer ended. */
  const answerOf = (c: Client): Placed => {
    const text = c.stdout.endsWith("\n") ? c.stdout.slice(0, -1) : c.stdout;
    const died = c.exit !== undefined && (c.cut || c.exit.signal !== null || /daemon went away/i.test(c.stderr));
    return { id: `m${c.n}`, text, versions: [text], choices: [], order: c.outChunks[0]?.[1] ?? order, ...(died ? { interrupted: true } : {}) };
  };

  /**
   * What a window shows: the answers that came to it (a late answer's notice, a kept letter:
   * a header line, then the text up to a blank line; the scenarios' late answers are one
   * paragraph) and its questions, whose numbered choices go once a line says how it was settled.
   */
  const windowMessages = (w: Client): Placed[] => {
    const out: Placed[] = [];
    let offset = 0;
    let current: Placed | undefined;
    for (const line of w.stdout.split("\n")) {
      if (LETTER.test(line) || LATE_ANSWER.test(line)) {
        current = { id: `w${w.n}-${out.length}`, text: "", versions: [], choices: [], order: arrival(w.outChunks, offset) };
        out.push(current);
      } else if (line === "") current = undefined;
      else if (current) current.text = current.text ? `${current.text}\n${line}` : line;
      offset += line.length + 1;
    }
    for (const m of out) m.versions = [m.text];
    const lines = w.stderr.split("\n");
    let start = 0;
    offset = 0;
    let asked: Placed | undefined;
    for (const [i, line] of lines.entries()) {
      const choices = CHOICES.exec(line);
      if (choices) {
        const text = lines.slice(start, i).join("\n").trim();
        asked = { id: `q${w.n}-${i}`, text, versions: [text], choices: choices[1]!.split(/ {2}(?=\[\d\])/).map((c) => c.replace(/^\[\d\] /, "")), order: arrival(w.errChunks, offset) };
        out.push(asked);
        start = i + 1;
      } else if (line === "") start = i + 1;
      else if (asked && asked.choices.length > 0) {
        asked.choices = [];
        asked.text = `${asked.text}\n\n${line}`;
        asked.versions.push(asked.text);
        start = i + 1;
      }
      offset += line.length + 1;
    }
    return out;
  };

  const all = (): Placed[] => [...oneShots.map(answerOf), ...windows.flatMap(windowMessages)].sort((a, b) => a.order - b.order);
  const onlyTheOwner = (chat: ChatRef) => {
    if (chat.kind !== "dm" || chat.with.id !== OWNER.id) throw new Error("the terminal has one chat: the owner's");
  };
  const inbox = () => {
    try {
      return readFileSync(join(daemon!.home, "inbox.jsonl"), "utf8");
    } catch {
      return "";
    }
  };

  return {
    name: "terminal",
    capabilities: TERMINAL_TRAITS.capabilities,
    daemonSetup: () => ({ channels: {}, env: {} }),
    async connected(d) {
      daemon = d;
      // The window stays open across a restart, as the owner's would: `hearth chat` waits for the
      // daemon and connects again (and may already show an answer the new daemon recovered, which
      // closing it now would cut off). A window opens when none is open.
      if (!windows.some(alive)) windows.push(run(["chat"], "pipe"));
      // Two clients: the window and the status request itself.
      await waitFor("the terminal window to connect", async () => {
        const status = await d.hearth(["status", "--json"]);
        const cli = (JSON.parse(status.stdout || "{}") as { channels?: Array<{ id: string; detail?: string }> }).channels?.find((c) => c.id === "cli");
        return cli?.detail === "2 client(s)";
      });
    },
    person(role) {
      if (role !== "owner") throw new Error("nobody but the owner uses the terminal");
      return OWNER;
    },
    async send(chat, _from, text, opts = {}) {
      onlyTheOwner(chat);
      const attach = (opts.files ?? []).flatMap((f, i) => {
        const path = join(files, `${oneShots.length}-${i}-${f.name}`);
        writeFileSync(path, f.bytes);
        return ["--attach", path];
      });
      const key = JSON.stringify(text).slice(1, -1);
      const accepted = () => inbox().split(key).length - 1;
      const before = accepted();
      const c = run(["chat", "-m", text, ...attach], "ignore");
      oneShots.push(c);
      // The platform has the message once the daemon accepted it (the client alone proves nothing).
      await waitFor(`the daemon to accept "${text}"`, () => {
        if (!alive(c) && accepted() === before) throw new Error(`hearth chat -m ended first (${JSON.stringify(c.exit)}):\n${c.stderr}`);
        return accepted() > before;
      });
    },
    botMessages: (chat) => {
      onlyTheOwner(chat);
      return all().map(({ order: _order, ...m }) => m);
    },
    deletedMessages: () => [],
    async choose(chat, message, label, by) {
      onlyTheOwner(chat);
      if (by.id !== OWNER.id) throw new Error("nobody but the owner uses the terminal");
      const window = windows.find((w) => alive(w) && message.id.startsWith(`q${w.n}-`));
      if (!window) throw new Error(`no open terminal window shows question ${message.id}`);
      const number = message.choices.indexOf(label) + 1;
      if (number === 0) throw new Error(`no choice "${label}" in ${JSON.stringify(message.choices)}`);
      window.child.stdin!.write(`${number}\n`);
      await waitFor("the question to be settled", () => windowMessages(window).find((m) => m.id === message.id)?.choices.length === 0);
      return "";
    },
    sentFiles: () => [],
    async loseConnection() {
      for (const c of oneShots.filter(alive)) (c.cut = true), c.child.kill("SIGKILL");
      await Promise.all(oneShots.map((c) => c.exited));
    },
    async restoreConnection() {
      // Nothing to restore: the next message opens a client of its own, and the window stayed.
    },
    async close() {
      for (const c of [...oneShots, ...windows].filter(alive)) c.child.kill("SIGKILL");
      await Promise.all([...oneShots, ...windows].map((c) => c.exited));
      rmSync(files, { recursive: true, force: true });
    },
  };
}
