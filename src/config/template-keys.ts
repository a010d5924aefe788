// Setup fills in `hearth init`'s commented template where it has a line for the key: the line
// `// "baseUrl": "https://proxy.example",  // or set ANTHROPIC_BASE_URL` becomes the live key with
// its explanation, and the commented `// "telegram": { … // }` block becomes the live block, its
// other options left as comments inside it. Inserting the key anew instead put a second
// "telegram" block above the commented one and took a neighbour's trailing comment with it.
import { findNodeAtLocation, parseTree, type JSONPath } from "jsonc-parser";

/**
 * `text` with the commented template line (or block) of `path`'s last key made live, when the
 * key is not in its parent yet and the parent holds such a comment; otherwise `text` unchanged.
 * In a block, the commented lines of `setKeys` (the keys the caller sets next) are dropped.
 * The caller then sets the values with jsonc-parser's `modify`, which edits the live key in place.
 */
export function liveTemplateKey(text: string, path: JSONPath, setKeys: readonly string[] = []): string {
  const key = String(path.at(-1));
  const tree = parseTree(text, [], { allowTrailingComma: true });
  const parent = tree && findNodeAtLocation(tree, path.slice(0, -1));
  if (!parent || parent.type !== "object" || findNodeAtLocation(tree, path)) return text;
  const lines = text.split("\n");
  // The line numbers the parent object spans.
  const first = text.slice(0, parent.offset).split("\n").length - 1;
  const last = text.slice(0, parent.offset + parent.length).split("\n").length - 1;
  const open = new RegExp(`^(\\s*)// ("${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}": )(.*)$`);
  for (let i = first; i <= last; i++) {
    const m = open.exec(lines[i]!);
    if (!m) continue;
    const [, indent, name, rest] = m;
    if (!rest!.trimStart().startsWith("{")) {
      lines[i] = `${indent}${name}${rest}`;
      return lines.join("\n");
    }
    const close = lines.findIndex((l, j) => j > i && j <= last && new RegExp(`^${indent}// \\},?\\s*$`).test(l));
    if (close === -1) return text;
    const inner = lines
      .slice(i + 1, close)
      .filter((l) => !setKeys.some((k) => new RegExp(`^${indent}//\\s+"${k}":`).test(l)))
      .map((l) => (l.startsWith(`${indent}//   `) ? `${indent}  // ${l.slice(indent!.length + 5)}` : l));
    lines.splice(i, close - i + 1, `${indent}${name}{`, ...inner, `${indent}},`);
    return lines.join("\n");
  }
  return text;
}
