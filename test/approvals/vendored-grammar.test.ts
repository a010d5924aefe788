// The bash grammar Hearth loads is kept in vendor/ (the package's native builds stay out of the
// production install); it must be the very file of the tree-sitter-bash package the lock names.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { GRAMMAR_PATH, shellReader } from "../../src/approvals/shell.ts";

describe("the vendored bash grammar", () => {
  it("is byte for byte the installed tree-sitter-bash package's wasm", () => {
    const installed = createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm");
    expect(readFileSync(GRAMMAR_PATH).equals(readFileSync(installed))).toBe(true);
  });

  it("is the one the reader loads", async () => {
    const line = (await shellReader()).read("rm -r build");
    expect(line.type === "read" && line.commands.map((c) => c.words.map((w) => w.value))).toEqual([["rm", "-r", "build"]]);
  });
});
