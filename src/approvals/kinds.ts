// What a command line does, as the approval policy needs it: the risky kinds it holds anywhere
// in it (docs/approvals.md lists them), the code in it that Hearth cannot read, and
// whether it reaches the network. The line is read by shell.ts; the commands another command
// runs are read in turn — the string of `sh -c` and `eval`, a wrapper's command (sudo, env,
// xargs, timeout…), find's -exec, text piped or here-doc'ed into a shell, a shell script run
// by path — up to a bound past which the line is asked about whole.
import { existsSync, openSync, readSync, closeSync, statSync } from "node:fs";
import path from "node:path";
import type { Redirect, ShellReader, ShellWord, Stdin } from "./shell.ts";

/** What one part of a line is, for the policy (judge in policy.ts). */
export type Finding =
  | { type: "risky"; why: string }
  /**
   * Code whose effect Hearth cannot know from the line: asked about in a tainted run. `risk`:
   * why it could be a risky kind (asked in any run), as a clause ("that code mentions
   * \"rmtree\""); null when nothing suggests it.
   */
  | { type: "unreadable"; what: string; risk: string | null }
  | { type: "network" }
  /** The line, or a line inside it, does not read as bash. */
  | { type: "unparsed"; reason: string };

/** Where a place is another machine (an SSH exec host): its files cannot be looked at from here. */
export type RemoteOf = (place: string) => string | null;

interface Reading {
  reader: ShellReader;
  /** The workspace folder (or an SSH exec host's place) paths are resolved against. */
  folder: string;
  remoteOf: RemoteOf;
  depth: number;
  /**
   * The whole command line (with a script's text when reading one): what code whose text is
   * unknown is judged by. The outer line, not the nested one: `sh -c 'eval "$0"' 'rm -r x'`.
   */
  line: string;
}

/** Lines nested deeper than this (`bash -c "sh -c '…'"`, wrappers of wrappers) are not read: asked about whole. */
const MAX_DEPTH = 4;
const WRAPPER_TAILS = 4;
export const TOO_DEEP = "it nests commands too deeply to judge (bash -c within bash -c …)";
const CURL_SH = "it downloads and runs a script (curl … | sh)";

/** The findings of a whole command line, in the order they occur. */
export function findingsOf(reader: ShellReader, line: string, folder: string, remoteOf: RemoteOf): Finding[] {
  return lineFindings({ reader, folder, remoteOf, depth: 0, line }, line);
}

/** Whether `words` has one of `flags`: exactly, inside a cluster of short ones (`-rf`), or as a long one abbreviated (`--rec`, as getopt takes it). */
const has = (words: string[], ...flags: string[]) =>
  words.some((w) => flags.includes(w) || (/^-[a-zA-Z]+$/.test(w) && flags.some((f) => /^-[a-zA-Z]$/.test(f) && w.includes(f[1]!))) || (/^--[a-z-]{3,}$/.test(w) && flags.some((f) => f.startsWith(w))));
/** git's words from its subcommand on, past global options (`git -C dir -c k=v push …` → push …). */
function gitArgs(words: string[]): string[] {
  let i = 1;
  while (i < words.length && words[i]!.startsWith("-")) i += ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"].includes(words[i]!) ? 2 : 1;
  return words.slice(i);
}
const git = (words: string[], sub: string) => first(words) === "git" && gitArgs(words)[0] === sub;
const base = (word: string) => path.basename(word);
const first = (words: string[]) => base(words[0] ?? "");

interface RiskyKind {
  test: (words: string[]) => boolean;
  why: string;
}

const FIND_EXEC = ["-exec", "-execdir", "-ok", "-okdir"];
const DELETERS = ["rm", "unlink", "shred"];

/** The built-in list (docs/approvals.md names each), tested on each command's words wherever it is in the line. */
export const RISKY_KINDS: readonly RiskyKind[] = [
  { test: (w) => ["sudo", "su", "doas"].includes(first(w)), why: "it runs as another user (sudo)" },
  { test: (w) => first(w) === "rm" && has(w, "-r", "-R", "--recursive"), why: "it deletes recursively (rm -r)" },
  { test: (w) => ["shred", "mkfs", "dd", "wipefs", "fdisk"].includes(first(w)) || first(w).startsWith("mkfs."), why: "it overwrites a disk or file in place" },
  { test: (w) => first(w) === "truncate", why: "it truncates a file (truncate)" },
  { test: (w) => first(w) === "find" && (w.includes("-delete") || w.some((x, j) => FIND_EXEC.includes(x) && DELETERS.includes(base(w[j + 1] ?? "")))), why: "it deletes the files it finds (find -delete, find -exec rm)" },
  { test: (w) => first(w) === "xargs" && w.slice(1).some((x) => DELETERS.includes(base(x))), why: "it deletes the files it is given (xargs rm)" },
  { test: (w) => git(w, "push") && (has(gitArgs(w), "-f", "-d", "--force", "--force-with-lease", "--mirror", "--delete", "--prune") || gitArgs(w).some((x) => x.startsWith("--force") || /^\+|^:./.test(x))), why: "it rewrites history on a remote (git push --force)" },
  { test: (w) => git(w, "reset") && w.includes("--hard"), why: "it discards uncommitted work (git reset --hard)" },
  { test: (w) => git(w, "clean"), why: "it deletes untracked files (git clean)" },
  { test: (w) => ["chmod", "chown", "chgrp"].includes(first(w)) && has(w, "-R", "--recursive"), why: "it changes permissions recursively" },
  { test: (w) => ["kill", "pkill", "killall"].includes(first(w)), why: "it stops other processes (kill)" },
  { test: (w) => ["apt", "apt-get", "dnf", "yum", "pacman", "apk", "brew", "snap"].includes(first(w)), why: "it installs or removes system software" },
  { test: (w) => ["pip", "pip3", "pipx", "gem", "cargo", "go"].includes(first(w)) && ["install", "uninstall"].includes(w[1] ?? ""), why: "it installs software" },
  { test: (w) => ["npm", "pnpm", "yarn", "bun"].includes(first(w)) && ["install", "i", "add", "ci", "exec", "dlx", "x"].includes(w[1] ?? ""), why: "it installs software" },
  { test: (w) => ["npx", "bunx", "uvx"].includes(first(w)), why: "it downloads and runs software" },
];

/** Programs that reach the network (what a tainted run is asked about). */
export const NETWORK_COMMANDS: ReadonlySet<string> = new Set(["curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "rsync", "ftp", "telnet", "socat", "http", "https", "aria2c", "ping", "dig", "nslookup", "host"]);
const FETCHERS = new Set(["curl", "wget"]);
const WRAPPERS = new Set(["env", "exec", "nohup", "time", "coproc", "nice", "ionice", "command", "builtin", "xargs", "timeout", "stdbuf", "setsid", "chrt", "taskset", "flock", "parallel", "sudo", "doas", "busybox"]);
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"]);
/** Interpreters and the options that give them code on the command line. */
const CODE_FLAGS: Record<string, string[]> = { python: ["-c"], node: ["-e", "--eval", "-p", "--print"], perl: ["-e", "-E"], ruby: ["-e"], php: ["-r"], lua: ["-e"], deno: ["eval"], bun: ["-e", "--eval"], osascript: ["-e"] };
/** Interpreters whose first operand is a script file (deno's and bun's are subcommands). */
const SCRIPT_OPERAND = new Set(["python", "node", "perl", "ruby", "php", "lua"]);
const VALUE_OPTIONS = new Set(["-W", "-X", "-r", "--require", "--import", "--loader", "--experimental-loader", "-I", "--env-file"]);
const AWKS = new Set(["awk", "gawk", "mawk", "nawk"]);
/** Devices a write to is no risk. */
const HARMLESS_DEVICE = /^\/dev\/(?:null|zero|stdout|stderr|tty|fd\/\d+)$/;
/** Programs installed by the system, not scripts someone wrote. */
const SYSTEM_PATH = /^\/(?:usr|bin|sbin|lib|lib64|opt|nix|snap|etc)\//;
/** Words in code Hearth does not read that could make it a risky kind (deleting, killing, overwriting, running other commands). */
const RISKY_WORDS =
  /\b(?:rm|rmdir|rmtree|remove_tree|removedirs|rm_r|rm_rf|rmSync|unlink|unlinkSync|kill|killall|pkill|dd|mkfs|shred|wipefs|truncate|sudo|doas|chmod|chown|system|popen|subprocess|spawn|spawnSync|execSync|execFile|execFileSync|child_process|exec|execv|execvp|shell_exec|passthru|proc_open|writeFile|writeFileSync)\b|\/dev\/(?:sd|nvme|hd|mmcblk|disk)|\bopen\s*\([^)]*["']w/;
const SCRIPT_MAX = 256 * 1024;
const isAssignment = (w: ShellWord) => w.known && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w.value);

/** Why code Hearth cannot read could be a risky kind: it mentions one ("rmtree"); null when it does not. */
export function mentionsRisk(code: string, where = "that code"): string | null {
  const m = RISKY_WORDS.exec(code);
  return m ? `${where} mentions "${m[0].length > 24 ? `${m[0].slice(0, 24)}…` : m[0]}"` : null;
}

function lineFindings(r: Reading, text: string): Finding[] {
  if (r.depth > MAX_DEPTH) return [{ type: "risky", why: TOO_DEEP }];
  const read = r.reader.read(text);
  if (read.type === "unreadable") return [{ type: "unparsed", reason: read.reason }];
  const out: Finding[] = [];
  // A line that sets PATH runs programs Hearth cannot name: any of them may be a script it wrote.
  if (read.assigns.includes("PATH")) out.push({ type: "unreadable", what: "a changed PATH", risk: mentionsRisk(r.line, "the line") });
  for (const c of read.commands) out.push(...commandFindings(c.words, c.stdin, r, "command"));
  for (const red of read.redirects) out.push(...redirectFindings(red, r));
  return out;
}

/**
 * The findings of one command. `role` "first-tail" and "tail": words after a wrapper that may be
 * the command it runs or only one of its options' values (`flock ./lock make`), so a missing file
 * is no finding; for a later tail, an unknown word is none either.
 */
function commandFindings(all: ShellWord[], stdin: Stdin, r: Reading, role: "command" | "tail" | "first-tail"): Finding[] {
  if (r.depth > MAX_DEPTH) return [{ type: "risky", why: TOO_DEEP }];
  let i = 0;
  while (i < all.length && isAssignment(all[i]!)) i++;
  const words = all.slice(i);
  const name = words[0];
  if (!name) return [];
  const out: Finding[] = [];
  if (words.some((w) => /\bhttps?:\/\/|\/dev\/(?:tcp|udp)\//i.test(w.value))) out.push({ type: "network" });
  if (!name.known) {
    if (name.runs.some((p) => FETCHERS.has(p))) return [...out, { type: "risky", why: CURL_SH }];
    // A glob or brace pattern as the program (`/bin/r?`) could name any program, rm too.
    const pattern = !/[$`]/.test(name.value);
    if (role !== "tail") out.push({ type: "unreadable", what: `${name.value} as the program`, risk: pattern ? "a pattern as the program could name any program" : mentionsRisk(r.line, "the line") });
    return out;
  }
  const values = words.map((w) => w.value);
  const prog = base(name.value);
  for (const kind of RISKY_KINDS) if (kind.test(values)) out.push({ type: "risky", why: kind.why });
  const over = overwrites(words, r);
  if (over) out.push({ type: "risky", why: over });
  if (NETWORK_COMMANDS.has(prog) || (prog === "git" && ["push", "pull", "fetch", "clone", "ls-remote"].includes(gitArgs(values)[0] ?? ""))) out.push({ type: "network" });
  if (name.value.includes("/") && !SYSTEM_PATH.test(name.value)) out.push(...scriptFindings(name, r, name.value, null, role !== "command"));
  out.push(...codeFindings(prog, words, stdin, r));
  out.push(...innerFindings(prog, words, r));
  return out;
}

/** What runs the code that a shell, eval, an interpreter or awk is given. */
function codeFindings(prog: string, words: ShellWord[], stdin: Stdin, r: Reading): Finding[] {
  const args = words.slice(1);
  if (SHELLS.has(prog)) return shellFindings(prog, args, stdin, r);
  if (prog === "eval" || prog === "watch") {
    // watch runs its words through `sh -c`, after its options (-n takes a value).
    let start = 0;
    while (prog === "watch" && start < args.length && args[start]!.known && args[start]!.value.startsWith("-")) start += ["-n", "--interval"].includes(args[start]!.value) ? 2 : 1;
    const code = args.slice(start);
    const joined: ShellWord = { value: code.map((a) => a.value).join(" "), known: code.every((a) => a.known), runs: code.flatMap((a) => a.runs) };
    return codeLine(joined, prog, r);
  }
  if (prog === "source" || prog === ".") {
    const file = args[0];
    if (!file) return [];
    if (file.runs.some((p) => FETCHERS.has(p))) return [{ type: "risky", why: CURL_SH }];
    return scriptFindings(file, r, `${prog} ${file.value}`, true, false);
  }
  if (prog === "alias") return args.flatMap((a) => (a.value.includes("=") ? codeLine({ ...a, value: a.value.slice(a.value.indexOf("=") + 1) }, "alias", r) : []));
  if (prog === "trap" && args[0]) return codeLine(args[0], "trap", r);
  const lang = /^python[0-9.]*$/.test(prog) ? "python" : prog === "nodejs" ? "node" : prog;
  if (CODE_FLAGS[lang]) return interpreterFindings(prog, lang, args, stdin, r);
  if (AWKS.has(prog)) return awkFindings(prog, args, r);
  return [];
}

/** `sh -c CODE`, `bash script.sh`, `bash <(curl …)`, or a shell reading its code from standard input. */
function shellFindings(prog: string, args: ShellWord[], stdin: Stdin, r: Reading): Finding[] {
  let i = 0;
  let c = false;
  let s = false;
  for (; i < args.length; i++) {
    const v = args[i]!.value;
    if (!args[i]!.known) break;
    if (v === "--" || v === "-") {
      i++;
      break;
    }
    if (/^[-+][oO]$/.test(v)) i++;
    else if (v.startsWith("--")) continue;
    else if (/^[-+][a-zA-Z]+$/.test(v)) {
      c ||= v.startsWith("-") && v.includes("c");
      s ||= v.startsWith("-") && v.includes("s");
    } else break;
  }
  const operand = args[i];
  if (c) return operand ? codeLine(operand, `${prog} -c`, r) : [];
  // -s: the code comes from standard input, and the operands are its arguments.
  if (operand && !s) {
    if (operand.runs.some((p) => FETCHERS.has(p))) return [{ type: "risky", why: CURL_SH }];
    return scriptFindings(operand, r, `${prog} ${operand.value}`, true, false);
  }
  return stdinFindings(stdin, r, prog, true);
}

/** A line given as a string (`sh -c`, `eval`, `trap`, `alias`): read as a line of its own when it is known. */
function codeLine(code: ShellWord, what: string, r: Reading): Finding[] {
  if (!code.known) {
    if (code.runs.some((p) => FETCHERS.has(p))) return [{ type: "risky", why: CURL_SH }];
    return [{ type: "unreadable", what, risk: mentionsRisk(r.line, "the line") }];
  }
  return [{ type: "unreadable", what, risk: null }, ...lineFindings({ ...r, depth: r.depth + 1 }, code.value)];
}

/** `python3 -c CODE`, `node -e CODE`, `perl -ne CODE`, `python3 x.py`, `python3 -m pip …`, or code from standard input. */
function interpreterFindings(prog: string, lang: string, args: ShellWord[], stdin: Stdin, r: Reading): Finding[] {
  const flags = CODE_FLAGS[lang]!;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = a.value;
    const flag = flags.find((f) => v === f || (/^-[a-zA-Z]$/.test(f) && /^-[a-zA-Z]+$/.test(v) && v.endsWith(f[1]!)));
    if (flag) return codeText(args[i + 1] ?? { value: "", known: true, runs: [] }, `${prog} ${flag}`, r);
    if (a.known && v.startsWith("--eval=")) return codeText({ ...a, value: v.slice(7) }, `${prog} --eval`, r);
    if (lang === "python" && v === "-m") return commandFindings(args.slice(i + 1), stdin, { ...r, depth: r.depth + 1 }, "command");
    if (!a.known) return [{ type: "unreadable", what: `${prog} ${v}`, risk: mentionsRisk(r.line, "the line") }];
    if (VALUE_OPTIONS.has(v)) i++;
    else if (v === "-") break;
    else if (!v.startsWith("-")) return SCRIPT_OPERAND.has(lang) ? scriptFindings(a, r, `${prog} ${v}`, false, false) : [];
  }
  return stdinFindings(stdin, r, prog, false);
}

/** Code for an interpreter, given as text: what it mentions decides whether it could be risky. */
function codeText(code: ShellWord, what: string, r: Reading): Finding[] {
  if (!code.known) return code.runs.some((p) => FETCHERS.has(p)) ? [{ type: "risky", why: CURL_SH }] : [{ type: "unreadable", what, risk: mentionsRisk(r.line, "the line") }];
  return [{ type: "unreadable", what, risk: mentionsRisk(code.value) }];
}

/** awk's program runs other commands only through system(), a pipe or getline: then it is code Hearth cannot read. */
function awkFindings(prog: string, args: ShellWord[], r: Reading): Finding[] {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.known && ["-F", "-v"].includes(a.value)) i++;
    else if (a.known && a.value === "-f") return args[i + 1] ? scriptFindings(args[i + 1]!, r, `${prog} -f ${args[i + 1]!.value}`, false, false) : [];
    else if (a.known && a.value.startsWith("-") && a.value !== "-") continue;
    else if (!a.known) return [{ type: "unreadable", what: prog, risk: mentionsRisk(r.line, "the line") }];
    else return /\bsystem\s*\(|(?:^|[^|])\|(?:[^|]|$)|\bgetline\b/.test(a.value) ? [{ type: "unreadable", what: `${prog} with system()`, risk: mentionsRisk(a.value) }] : [];
  }
  return [];
}

/** A shell or interpreter that reads its code from standard input: a pipe, a here-document, a file. */
function stdinFindings(stdin: Stdin, r: Reading, prog: string, shell: boolean): Finding[] {
  switch (stdin.type) {
    case "inherited":
      return [];
    case "file":
      return scriptFindings(stdin.path, r, `${prog} < ${stdin.path.value}`, shell, false);
    case "text":
      return piped(stdin.text, `a here-document run by ${prog}`, shell, r);
    case "pipe": {
      if (stdin.from.some((c) => FETCHERS.has(base(c.words[0]?.value ?? "")))) return [{ type: "risky", why: CURL_SH }];
      const what = `text piped into ${prog}`;
      const last = stdin.last.length === 1 ? stdin.last[0]! : null;
      const lastName = last ? base(last.words[0]?.value ?? "") : "";
      // The text is known when the stage before prints words written in the line, or a here-document.
      if (last && (lastName === "echo" || lastName === "printf")) {
        const printed = last.words.slice(1).filter((w, j) => !(lastName === "echo" && j === 0 && /^-[neE]+$/.test(w.value)));
        const text = printed.map((w) => w.value).join(" ").replace(/\\n/g, "\n");
        return piped({ value: text, known: printed.every((w) => w.known), runs: printed.flatMap((w) => w.runs) }, what, shell, r);
      }
      if (last && lastName === "cat" && last.words.length === 1 && last.stdin.type === "text") return piped(last.stdin.text, what, shell, r);
      if (last && lastName === "cat" && last.words.length === 2) return scriptFindings(last.words[1]!, r, what, shell, false);
      return [{ type: "unreadable", what, risk: mentionsRisk(r.line, "the line") }];
    }
  }
}

function piped(text: ShellWord, what: string, shell: boolean, r: Reading): Finding[] {
  if (!shell) return codeText(text, what, r);
  if (!text.known) return text.runs.some((p) => FETCHERS.has(p)) ? [{ type: "risky", why: CURL_SH }] : [{ type: "unreadable", what, risk: mentionsRisk(r.line, "the line") }];
  return [{ type: "unreadable", what, risk: null }, ...lineFindings({ ...r, depth: r.depth + 1 }, text.value)];
}

/**
 * A file run as code (`./x.sh`, `bash x.sh`, `source env`, `python3 x.py`): code Hearth cannot
 * read, since anyone may have written it. Its text is read when it is on this machine: a shell
 * script's lines are judged as lines, other code by what it mentions; one that is not there
 * (or too long, or on another machine) could be anything. A compiled program is treated as any
 * installed one. `shell` null: decided by its `#!` line.
 */
function scriptFindings(file: ShellWord, r: Reading, what: string, shell: boolean | null, maybeNotCommand: boolean): Finding[] {
  const unreadable = (risk: string | null): Finding[] => (maybeNotCommand && risk !== null ? [] : [{ type: "unreadable", what, risk }]);
  if (!file.known) return unreadable(mentionsRisk(r.line, "the line"));
  const remote = r.remoteOf(r.folder);
  if (remote !== null) return unreadable(`its file is on ${remote}, where Hearth cannot read it`);
  const content = readScript(resolvePath(r.folder, file.value));
  switch (content.type) {
    case "missing":
      return unreadable("its file is not there to read");
    case "too-long":
      return unreadable("its file is too long to read");
    case "binary":
      return unreadable(null);
    case "text": {
      const isShell = shell ?? (!content.text.startsWith("#!") || /^#!.*\b(?:ba|da|k|z|mk)?sh\b/.test(content.text.split("\n", 1)[0]!));
      if (!isShell) return unreadable(mentionsRisk(content.text));
      const inner = lineFindings({ ...r, depth: r.depth + 1, line: `${content.text}\n${r.line}` }, content.text).map((f): Finding => (f.type === "risky" ? { ...f, why: `${f.why}, in ${file.value}` } : f));
      return [{ type: "unreadable", what, risk: null }, ...inner];
    }
  }
}

type Script = { type: "text"; text: string } | { type: "binary" } | { type: "missing" } | { type: "too-long" };

function readScript(file: string): Script {
  try {
    const st = statSync(file);
    if (st.isDirectory()) return { type: "binary" };
    const fd = openSync(file, "r");
    try {
      const head = Buffer.alloc(Math.min(st.size, 8192));
      readSync(fd, head, 0, head.length, 0);
      if (head.includes(0)) return { type: "binary" };
      if (st.size > SCRIPT_MAX) return { type: "too-long" };
      const all = Buffer.alloc(st.size);
      readSync(fd, all, 0, st.size, 0);
      return { type: "text", text: all.toString("utf8") };
    } finally {
      closeSync(fd);
    }
  } catch {
    return { type: "missing" };
  }
}

const resolvePath = (folder: string, p: string) => path.resolve(folder, p.replace(/^~(?=\/|$)/, process.env.HOME ?? "~"));

/** The commands a command runs in turn: a wrapper's (the first few words that are no option), find's -exec. */
function innerFindings(prog: string, words: ShellWord[], r: Reading): Finding[] {
  const out: Finding[] = [];
  const deeper = { ...r, depth: r.depth + 1 };
  // A wrapper's options come before its command and cannot all be told from it (`xargs -I {} rm
  // -r {}`, `sudo -u bob rm -r x`, `timeout -s KILL 5 curl …`): each of the first tails that
  // start with a word that is no option is judged (a few: nested wrappers must not multiply).
  if (WRAPPERS.has(prog)) {
    let tails = 0;
    for (let j = 1; j < words.length && tails < WRAPPER_TAILS; j++) {
      const w = words[j]!;
      if (w.known && (w.value.startsWith("-") || isAssignment(w))) continue;
      out.push(...commandFindings(words.slice(j), { type: "inherited" }, deeper, tails === 0 ? "first-tail" : "tail"));
      tails++;
    }
  }
  if (prog === "find") {
    for (const [j, w] of words.entries()) {
      if (!FIND_EXEC.includes(w.value)) continue;
      const end = words.findIndex((x, k) => k > j && (x.value === ";" || x.value === "+"));
      out.push(...commandFindings(words.slice(j + 1, end < 0 ? undefined : end).filter((x) => x.value !== "{}"), { type: "inherited" }, deeper, "command"));
    }
  }
  return out;
}

/**
 * A mv, cp or tee that writes over an existing file, or outside `folder` (the workspace), or to
 * a path known only when it runs: the reason, or null. Paths are resolved against the folder.
 */
function overwrites(words: ShellWord[], r: Reading): string | null {
  const prog = base(words[0]?.value ?? "");
  if (prog === "tee") {
    if (words.some((w) => w.value === "-a" || w.value === "--append")) return null;
    for (const w of words.slice(1)) {
      if (w.known && w.value.startsWith("-")) continue;
      const why = writeOver(w, r);
      if (why) return `${why} (tee ${w.value})`;
    }
    return null;
  }
  if (prog !== "mv" && prog !== "cp") return null;
  const why = `it moves or copies over an existing file or outside the workspace (${prog})`;
  // Another machine's files cannot be looked at from here: any mv or cp there is asked about.
  if (r.remoteOf(r.folder) !== null) return why;
  const args = words.slice(1).filter((w) => !(w.known && w.value.startsWith("-")));
  if (args.length < 2) return null;
  const target = args.at(-1)!;
  if (!target.known) return why;
  const file = resolvePath(r.folder, target.value);
  if (!(file === r.folder || file.startsWith(r.folder + path.sep))) return why;
  return isExistingFile(file) ? why : null;
}

/** Why writing from the start of `target` is risky: a device, an existing file, a path not known yet; null when it is not. */
function writeOver(target: ShellWord, r: Reading): string | null {
  if (!target.known) return "it writes over a file it names only when it runs";
  if (HARMLESS_DEVICE.test(target.value)) return null;
  if (target.value.startsWith("/dev/")) return "it writes to a device";
  const remote = r.remoteOf(r.folder);
  if (remote !== null) return `it may overwrite a file on ${remote}, which Hearth cannot look at`;
  return isExistingFile(resolvePath(r.folder, target.value)) ? "it overwrites an existing file" : null;
}

function isExistingFile(file: string): boolean {
  try {
    return existsSync(file) && !statSync(file).isDirectory();
  } catch {
    return true;
  }
}

/** A file redirection: `>` over an existing file or to a device is risky (truncation); `>>` to a device too; `/dev/tcp/…` reaches the network. */
function redirectFindings(red: Redirect, r: Reading): Finding[] {
  if (/^\/dev\/(?:tcp|udp)\//.test(red.target.value)) return [{ type: "network" }];
  if (red.op === "<") return [];
  const append = red.op === ">>" || red.op === "&>>";
  if (append && !(red.target.known && red.target.value.startsWith("/dev/") && !HARMLESS_DEVICE.test(red.target.value))) return [];
  const why = writeOver(red.target, r);
  return why ? [{ type: "risky", why: `${why} (${red.op} ${red.target.value})` }] : [];
}
