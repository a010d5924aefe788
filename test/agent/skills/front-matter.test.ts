// The SKILL.md front matter subset: what skill files in the wild use, and clear errors for the rest.
import { describe, expect, it } from "vitest";
import { parseSkillFile } from "../../../src/agent/skills/front-matter.ts";
import { skillsPromptBlock } from "../../../src/agent/skills/registry.ts";

describe("parseSkillFile", () => {
  it("reads scalars, quoted strings, block scalars, nested maps and lists, and keeps every field", () => {
    const r = parseSkillFile(
      [
        "---",
        "name: pdf-tools",
        'description: "Fill PDF forms: use when a PDF is mentioned."',
        "license: 'Apache-2.0' # a comment",
        "allowed-tools: [read, exec]",
        "metadata:",
        "  author: someone",
        "  version: 1.2",
        "keywords:",
        "  - pdf",
        "  - forms",
        "notes: >",
        "  folded",
        "  text",
        "---",
        "# Body",
        "",
      ].join("\n"),
    );
    expect(r).toEqual({
      ok: true,
      data: {
        name: "pdf-tools",
        description: "Fill PDF forms: use when a PDF is mentioned.",
        license: "Apache-2.0",
        "allowed-tools": ["read", "exec"],
        metadata: { author: "someone", version: "1.2" },
        keywords: ["pdf", "forms"],
        notes: "folded text",
      },
      body: "# Body\n",
    });
  });

  it.each([
    ["no front matter", "# Just a body\n", "no front matter: SKILL.md must start with a line of three dashes (---)"],
    ["unclosed", "---\nname: x\n", "the front matter is not closed: add a line of three dashes (---) after it"],
    ["not key: value", "---\nname x\n---\n", 'line 2: expected "key: value", found "name x"'],
    ["duplicate key", "---\nname: a\nname: b\n---\n", 'line 3: "name" is given twice'],
    ["unclosed quote", '---\ndescription: "open\n---\n', "line 2: the double-quoted string is not closed or has a bad escape"],
    ["flow map", "---\nmeta: {a: 1}\n---\n", 'line 2: flow maps, anchors and tags are not supported; write plain "key: value" lines'],
  ])("reports %s with its line", (_what, text, error) => {
    expect(parseSkillFile(text)).toEqual({ ok: false, error });
  });
});

describe("skillsPromptBlock", () => {
  it("is one line per skill in the given order, and empty without skills", () => {
    const skill = (name: string, description: string) => ({ name, description, scope: "main" as const, folder: `skills/${name}`, file: `skills/${name}/SKILL.md`, frontMatter: {} });
    expect(skillsPromptBlock([])).toBe("");
    expect(skillsPromptBlock([skill("a", "First."), skill("b", "Second.")]).split("\n").slice(1)).toEqual(["- a: First. (skills/a/SKILL.md)", "- b: Second. (skills/b/SKILL.md)"]);
  });
});
