// Reading a bash command line with a real grammar (tree-sitter-bash's WebAssembly build, run by
// web-tree-sitter): every command the line runs — inside groups, conditionals, loops, functions,
// pipelines, negation, subshells and substitutions — with its words as bash hands them to the
// program, the line's file redirections, and where each command's standard input comes from.
// What is only known when the line runs (a variable, a substitution, a glob) is marked unknown,
// never guessed; a line that does not parse is reported as such, so the policy can fail closed.
import { fileURLToPath } from "node:url";
import { Language, Parser, type Node } from "web-tree-sitter";

/** One word of a command. */
export interface ShellWord {
  /** After quote removal (`'b'uild`, `\rm`, `"rm"` → build, rm, rm); for an unknown word, its text as written. */
  value: string;
  /** False when it holds an expansion, a substitution or a glob: what it is becomes known only when it runs. */
  known: boolean;
  /** The programs that substitutions inside it run (`"$(curl …)"` → ["curl"]), by their base names. */
  runs: string[];
}

/** Where a command's standard input comes from (what a shell or interpreter without a script reads as code). */
export type Stdin =
  | { type: "inherited" }
  /** A here-string (`<<< "…"`) or here-document. */
  | { type: "text"; text: ShellWord }
  /** The earlier stages of its pipeline; `last` is the stage right before it. */
  | { type: "pipe"; from: ShellCommand[]; last: ShellCommand[] }
  | { type: "file"; path: ShellWord };

/** A redirection to or from a file (`> out`, `2>>log`, `< in`); a descriptor copy (`2>&1`) is none. */
export interface Redirect {
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `>&`, `<`. */
  op: string;
  target: ShellWord;
}

export interface ShellCommand {
  /** The program first, then its arguments; assignments before it (`FOO=1 cmd`) are left out. */
  words: ShellWord[];
  stdin: Stdin;
}

export type ShellLine =
  | {
      type: "read";
      /** Every command of the line, in the order they appear (nested ones after the one that holds them). */
      commands: ShellCommand[];
      redirects: Redirect[];
      /** Variables the line sets (`PATH=…`, `export PATH=…`): a program named after one is not the one on the path. */
      assigns: string[];
      /** The line in one spelling: the same words give the same text, however they were quoted or spaced. */
      canonical: string;
    }
  | { type: "unreadable"; reason: string };

export interface ShellReader {
  /** Reads one line; never throws. */
  read(line: string): ShellLine;
}

/** The grammar, kept in the repository without the package's C sources and native builds (vendor/tree-sitter-bash/README.md). */
export const GRAMMAR_PATH = fileURLToPath(new URL("../../vendor/tree-sitter-bash/tree-sitter-bash.wasm", import.meta.url));

let loading: Promise<ShellReader> | null = null;

/**
 * The bash reader, loaded on first use and kept (the grammar is ~1 MB of WebAssembly). Never
 * rejects: when the grammar cannot be loaded, the reader it gives reads every line as
 * unreadable, so every command is asked about rather than run unread.
 */
export function shellReader(): Promise<ShellReader> {
  loading ??= loadReader();
  return loading;
}

async function loadReader(): Promise<ShellReader> {
  try {
    await Parser.init();
    const bash = await Language.load(GRAMMAR_PATH);
    const parser = new Parser();
    parser.setLanguage(bash);
    return { read: (line) => readLine(parser, line) };
  } catch (err) {
    const reason = `Hearth's bash reader did not load (${(err as Error).message})`;
    return { read: () => ({ type: "unreadable", reason }) };
  }
}

function readLine(parser: Parser, line: string): ShellLine {
  const tree = parser.parse(line);
  if (!tree) return { type: "unreadable", reason: "it could not be read as bash" };
  // The tree lives in WebAssembly memory until deleted: everything is copied out first.
  try {
    const root = tree.rootNode;
    if (root.hasError) return { type: "unreadable", reason: `it does not read as bash (${errorPlace(root)})` };
    const commands = root.descendantsOfType("command").flatMap((c) => (c ? [commandOf(c)] : []));
    const redirects = root.descendantsOfType("file_redirect").flatMap((r) => {
      const red = r ? redirectOf(r) : null;
      return red ? [red] : [];
    });
    const assigns = root.descendantsOfType("variable_assignment").flatMap((a) => {
      const name = a?.childForFieldName("name")?.text;
      return name ? [name] : [];
    });
    return { type: "read", commands: commands.filter((c) => c.words.length > 0), redirects, assigns, canonical: canonicalOf(root) };
  } finally {
    tree.delete();
  }
}

/** Where a line stops parsing, for the question: "near `"unterminated`", "a missing `fi`". */
function errorPlace(root: Node): string {
  const bad = findError(root);
  if (!bad) return "a parse error";
  if (bad.isMissing) return `a missing "${bad.type}"`;
  const text = bad.text.replace(/\s+/g, " ").trim();
  return text ? `a parse error near "${text.length > 24 ? `${text.slice(0, 24)}…` : text}"` : "a parse error";
}

function findError(node: Node): Node | null {
  if (node.isError || node.isMissing) return node;
  for (const child of node.children) {
    if (child?.hasError || child?.isMissing) {
      const found = findError(child);
      if (found) return found;
    }
  }
  return null;
}

function commandOf(node: Node): ShellCommand {
  const words: ShellWord[] = [];
  for (const [i, child] of node.children.entries()) {
    const field = node.fieldNameForChild(i);
    if (child && (field === "name" || field === "argument")) words.push(wordOf(field === "name" ? (child.firstNamedChild ?? child) : child));
  }
  return { words, stdin: stdinOf(node) };
}

/** Where `command` reads from: its own redirection, the statement around it, or its pipeline. */
function stdinOf(command: Node): Stdin {
  const own = inputRedirect(command);
  if (own) return own;
  let node: Node = command;
  for (let parent = node.parent; parent; node = parent, parent = parent.parent) {
    switch (parent.type) {
      case "redirected_statement": {
        const body = parent.childForFieldName("body");
        const red = body?.id === node.id ? inputRedirect(parent) : null;
        if (red) return red;
        break;
      }
      case "pipeline": {
        const stages = parent.namedChildren.filter((c): c is Node => c !== null);
        const at = stages.findIndex((s) => s.id === node.id);
        if (at > 0) return { type: "pipe", from: stages.slice(0, at).flatMap(commandsIn), last: commandsIn(stages[at - 1]!) };
        // `cat <<EOF | sh`: the grammar hangs the pipeline's rest under the here-document.
        const heredoc = parent.parent;
        const statement = heredoc?.type === "heredoc_redirect" ? heredoc.parent : null;
        const body = statement?.childForFieldName("body");
        if (body) return { type: "pipe", from: commandsIn(body), last: commandsIn(body) };
        break;
      }
      case "command_substitution":
      case "process_substitution":
      case "program":
        return { type: "inherited" };
    }
  }
  return { type: "inherited" };
}

const commandsIn = (node: Node): ShellCommand[] => (node.type === "command" ? [node] : node.descendantsOfType("command")).flatMap((c) => (c ? [commandOf(c)] : []));

/** A here-string, here-document or `< file` among the redirections directly under `node`. */
function inputRedirect(node: Node): Stdin | null {
  for (const child of node.children) {
    if (!child) continue;
    if (child.type === "herestring_redirect") {
      const arg = child.namedChildren.find((c) => c !== null);
      return { type: "text", text: arg ? wordOf(arg) : { value: "", known: true, runs: [] } };
    }
    if (child.type === "heredoc_redirect") return { type: "text", text: heredocText(child) };
    if (child.type === "file_redirect") {
      const red = redirectOf(child);
      const fd = child.childForFieldName("descriptor")?.text ?? "0";
      if (red?.op === "<" && fd === "0") return { type: "file", path: red.target };
    }
  }
  return null;
}

function heredocText(redirect: Node): ShellWord {
  const body = redirect.children.find((c) => c?.type === "heredoc_body");
  if (!body) return { value: "", known: true, runs: [] };
  const start = redirect.children.find((c) => c?.type === "heredoc_start")?.text ?? "";
  const quoted = /['"\\]/.test(start);
  const expansions = quoted ? [] : body.namedChildren.filter((c) => c && c.type !== "heredoc_content");
  const strip = redirect.children.some((c) => c?.type === "<<-");
  const text = strip ? body.text.replace(/^\t+/gm, "") : body.text;
  return { value: text, known: expansions.length === 0, runs: runsIn(body) };
}

function redirectOf(node: Node): Redirect | null {
  const op = node.children.find((c) => c && !c.isNamed)?.text ?? "";
  const dest = node.childForFieldName("destination");
  if (!dest || !/^(?:>|>>|>\||&>|&>>|>&|<)$/.test(op)) return null;
  // `>&2`, `2>&1`, `>&-`: a descriptor copy or close, no file.
  if (op === ">&" && /^(?:\d+|-)$/.test(dest.text)) return null;
  return { op, target: wordOf(dest) };
}

/** Whether an unquoted word has a glob (`*`, `?`, `[`) or a brace expansion (`{a,b}`) bash expands. */
function expands(text: string): boolean {
  const bare = text.replace(/\\./gs, "_");
  return /[*?[]/.test(bare) || /\{[^}]*(?:,|\.\.)[^}]*\}/.test(bare);
}

/** A word's value as bash passes it, or its text when that is known only when it runs. */
function wordOf(node: Node): ShellWord {
  const unknown = (): ShellWord => ({ value: node.text, known: false, runs: runsIn(node) });
  switch (node.type) {
    case "word":
    case "number":
      if (node.type === "word" && expands(node.text)) return unknown();
      return { value: node.text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1"), known: true, runs: [] };
    case "raw_string":
      return { value: node.text.slice(1, -1), known: true, runs: [] };
    case "ansi_c_string": {
      const value = ansiC(node.text.slice(2, -1));
      return value === null ? unknown() : { value, known: true, runs: [] };
    }
    case "string": {
      let value = "";
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type !== "string_content") return unknown();
        value += child.text.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1");
      }
      return { value, known: true, runs: [] };
    }
    case "translated_string": {
      const inner = node.namedChildren.find((c) => c !== null);
      return inner ? wordOf(inner) : unknown();
    }
    case "concatenation": {
      const parts = node.namedChildren.flatMap((c) => (c ? [wordOf(c)] : []));
      if (parts.some((p) => !p.known)) return unknown();
      return { value: parts.map((p) => p.value).join(""), known: true, runs: [] };
    }
    default:
      return unknown();
  }
}

/** The programs commands inside `node` run (a substitution's), by base name. */
function runsIn(node: Node): string[] {
  return node.descendantsOfType("command").flatMap((c) => {
    const name = c?.childForFieldName("name");
    if (!name) return [];
    const w = wordOf(name.firstNamedChild ?? name);
    return [w.value.split("/").at(-1) ?? w.value];
  });
}

/** The value of `$'…'`; null for an escape not decoded here (the word is then unknown). */
function ansiC(body: string): string | null {
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };
  let failed = false;
  const out = body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs, (_m, e: string) => {
    if (e[0] === "x" || e[0] === "u" || e[0] === "U") return String.fromCodePoint(parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8));
    const s = simple[e];
    if (s === undefined) failed = true;
    return s ?? "";
  });
  return failed ? null : out;
}

const WORDISH = new Set(["word", "number", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation"]);

/**
 * One spelling of the line: known words in one quoting, everything else as written, tokens
 * joined by one space, comments left out. `rm  -r 'build'` and `rm -r "build"` give `rm -r
 * build`; `rm -r "a b"` and `rm -r a b` stay apart.
 */
function canonicalOf(node: Node): string {
  if (node.type === "comment") return "";
  if (node.type === "heredoc_body") return node.text;
  if (WORDISH.has(node.type)) {
    const w = wordOf(node);
    return w.known ? quoteWord(w.value) : node.text;
  }
  if (node.type === "variable_assignment") return node.children.map((c) => (c ? canonicalOf(c) : "")).join("");
  if (node.type === "file_redirect") return node.children.map((c) => (c ? canonicalOf(c) : "")).join("").replace(/^(\d*[<>&|]+)(?=\S)/, "$1 ");
  if (node.childCount === 0) return node.text;
  return node.children
    .map((c) => (c ? canonicalOf(c) : ""))
    .filter((t) => t !== "")
    .join(" ");
}

/** A value in the one quoting the canonical line uses: bare when safe, else in single quotes. */
export function quoteWord(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
