// Skills through a real gateway: listed one line each in the system prompt, bodies only through
// read, live edits without a restart, bad front matter reported, shared scopes limited.
import { linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let t: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  t = undefined;
});
afterEach(async () => {
  await t?.stop();
  await fake.close();
});

const INTRO =
  "Skills: procedures for particular tasks. When a task matches a skill, read its SKILL.md with the read tool before acting, and follow it; the files it mentions are in its folder.";
const BODY = "## Steps\n1. Run scripts/brew.sh with the bean count.\n2. Say how many cups are ready: the secret word is QUETZAL-42.\n";

function writeSkill(workspace: string, name: string, fields: string, body = BODY): void {
  mkdirSync(join(workspace, "skills", name), { recursive: true });
  writeFileSync(join(workspace, "skills", name, "SKILL.md"), `---\n${fields}\n---\n${body}`);
}

const systemOf = (r: RecordedRequest): string => (r.body.system as Array<{ text: string }>).map((b) => b.text).join("");
const skillLines = (system: string): string[] => system.split("\n").filter((l) => l === INTRO || /^- [a-z0-9-]+: .*\(skills\/.*\/SKILL\.md\)$/.test(l));

async function ask(channel: TestGateway["channel"], opts: { type?: "dm" | "group"; chat?: string; sender?: string } = {}): Promise<string> {
  const id = channel.say({ chat: opts.chat ?? "1", type: opts.type ?? "dm", sender: opts.sender ?? "1", text: "make coffee" });
  await waitFor("the reply", () => channel.replies.has(id), 15_000);
  return channel.replies.get(id)!.at(-1)!;
}

describe("skills in the system prompt", () => {
  it("lists a skill as one line, gives its body only through read, and follows edits without a restart", async () => {
    t = await startTestGateway(fake.url, { telegram: { groups: { policy: "allowlist", allow: ["-100"], requireMention: false } } });
    const ws = t.config.workspace;
    writeSkill(ws, "coffee", 'name: coffee\ndescription: Brew coffee with the office machine.\nlicense: MIT\nmetadata:\n  author: owner');
    const runtime = t.gateway.context.runtime;
    await waitFor("the skill to load", () => runtime.skills!.list().length === 1);

    fake.enqueue(text("ok"));
    await ask(t.channel);
    const first = systemOf(fake.requests[0]!);
    expect(skillLines(first)).toEqual([INTRO, "- coffee: Brew coffee with the office machine. (skills/coffee/SKILL.md)"]);
    expect(first).not.toContain("QUETZAL-42");

    // The model reads the skill: its body reaches the model as a tool result, not in the prompt.
    fake.enqueue(toolCall("read", { path: "skills/coffee/SKILL.md" }), text("Brewing."));
    expect(await ask(t.channel)).toBe("Brewing.");
    const afterRead = fake.requests[2]!;
    const result = lastUserContent(afterRead).find((b) => b.type === "tool_result")!;
    expect(String(result.content)).toContain("QUETZAL-42");
    expect(systemOf(afterRead)).not.toContain("QUETZAL-42");

    // Editing the body: the system prompt stays byte-identical.
    writeSkill(ws, "coffee", 'name: coffee\ndescription: Brew coffee with the office machine.\nlicense: MIT\nmetadata:\n  author: owner', "## Steps\nA completely different body.\n");
    await waitFor("the body edit to be seen", () => readFileSync(join(ws, "skills/coffee/SKILL.md"), "utf8").includes("different"));
    await new Promise((r) => setTimeout(r, 600)); // the watcher settles writes for 200 ms
    fake.enqueue(text("ok"));
    await ask(t.channel);
    expect(systemOf(fake.requests[3]!)).toBe(first);

    // Editing the description: exactly that line changes.
    writeSkill(ws, "coffee", "name: coffee\ndescription: Brew coffee and tea with the office machine.\nlicense: MIT");
    await waitFor("the description edit", () => runtime.skills!.list()[0]?.description.includes("tea") === true);
    fake.enqueue(text("ok"));
    await ask(t.channel);
    const edited = systemOf(fake.requests[4]!);
    const a = first.split("\n");
    const b = edited.split("\n");
    expect(b.length).toBe(a.length);
    const changed = a.flatMap((line, i) => (line === b[i] ? [] : [[line, b[i]]]));
    expect(changed).toEqual([["- coffee: Brew coffee with the office machine. (skills/coffee/SKILL.md)", "- coffee: Brew coffee and tea with the office machine. (skills/coffee/SKILL.md)"]]);

    // Removing it: the block goes away.
    rmSync(join(ws, "skills", "coffee"), { recursive: true });
    await waitFor("the removal", () => runtime.skills!.list().length === 0);
    fake.enqueue(text("ok"));
    await ask(t.channel);
    expect(skillLines(systemOf(fake.requests[5]!))).toEqual([]);
  });

  it("leaves out a skill with bad front matter, says why, and loads the rest", async () => {
    t = await startTestGateway(fake.url);
    const ws = t.config.workspace;
    writeSkill(ws, "good", "name: good\ndescription: A fine skill.");
    writeSkill(ws, "broken", "name: broken\ndescription: [unclosed");
    writeSkill(ws, "nameless", "description: No name here.");
    const runtime = t.gateway.context.runtime;
    await waitFor("the skills to load", () => runtime.skills!.list().length === 1 && runtime.skills!.problems().length === 2);
    expect(runtime.skills!.problems()).toEqual([
      { folder: "skills/broken", error: "invalid front matter: line 3: the [list] is not closed" },
      { folder: "skills/nameless", error: 'invalid front matter: "name" is missing' },
    ]);
    fake.enqueue(text("ok"));
    await ask(t.channel);
    expect(skillLines(systemOf(fake.requests[0]!))).toEqual([INTRO, "- good: A fine skill. (skills/good/SKILL.md)"]);
  });
});

describe("skills in shared chats", () => {
  it("a group sees only shared skills and can read only their folders", async () => {
    t = await startTestGateway(fake.url, { telegram: { groups: { policy: "allowlist", allow: ["-100"], requireMention: false } } });
    const ws = t.config.workspace;
    writeSkill(ws, "private-recipe", "name: private-recipe\ndescription: The owner's own recipe.", "The owner's secret is MARZIPAN-77.\n");
    writeSkill(ws, "team-coffee", "name: team-coffee\ndescription: Coffee for the team.\nscope: shared", "Grind 20 g. Team note PISTACHIO-5.\n");
    writeFileSync(join(ws, "skills", "team-coffee", "notes.txt"), "Beans are in the left cupboard.\n");
    writeFileSync(join(ws, "MEMORY.md"), "# Memory\nThe safe code is OBSIDIAN-9.\n");
    linkSync(join(ws, "MEMORY.md"), join(ws, "skills", "team-coffee", "memory-copy.md"));
    symlinkSync(join(ws, "MEMORY.md"), join(ws, "skills", "team-coffee", "memory-link.md"));
    await waitFor("the skills to load", () => t!.gateway.context.runtime.skills!.list().length === 2);

    fake.enqueue(
      toolCall("read", { path: "skills/private-recipe/SKILL.md" }),
      toolCall("read", { path: "skills/team-coffee/../private-recipe/SKILL.md" }),
      toolCall("read", { path: "MEMORY.md" }),
      toolCall("read", { path: "skills/team-coffee/SKILL.md" }),
      toolCall("read", { path: "skills/team-coffee/notes.txt" }),
      toolCall("write", { path: "skills/team-coffee/notes.txt", content: "x" }),
      toolCall("read", { path: "skills/team-coffee/memory-copy.md" }),
      toolCall("read", { path: "skills/team-coffee/memory-link.md" }),
      text("Done."),
    );
    expect(await ask(t.channel, { type: "group", chat: "-100", sender: "5" })).toBe("Done.");
    const group = fake.requests.slice(0, 9);
    const system = systemOf(group[0]!);
    expect(skillLines(system)).toEqual([INTRO, "- team-coffee: Coffee for the team. (skills/team-coffee/SKILL.md)"]);
    expect((group[0]!.body.tools as Array<{ name: string }>).map((x) => x.name)).toEqual(["read", "memory_search", "memory_get", "memory_write", "send_file"]);
    const results = group.slice(1).map((r) => lastUserContent(r).find((b) => b.type === "tool_result")!);
    const refusedRead = (p: string) => `Refused ${JSON.stringify(p)}: in this conversation read only opens the folders of shared skills.`;
    expect(results[0]!.content).toBe(refusedRead("skills/private-recipe/SKILL.md"));
    expect(results[1]!.content).toBe(refusedRead("skills/team-coffee/../private-recipe/SKILL.md"));
    expect(results[2]!.content).toBe(refusedRead("MEMORY.md"));
    expect(results[3]!.content).toBe("     1\t---\n     2\tname: team-coffee\n     3\tdescription: Coffee for the team.\n     4\tscope: shared\n     5\t---\n     6\tGrind 20 g. Team note PISTACHIO-5.");
    expect(results[4]!.content).toBe("     1\tBeans are in the left cupboard.");
    expect(String(results[5]!.content)).toMatch(/^Refused: write is only available in the owner's private chat\./);
    expect(results[6]!.content).toBe('Refused "skills/team-coffee/memory-copy.md": it is a hard link (a second name of another file); shared skills must hold plain files.');
    expect(results[7]!.content).toBe(refusedRead("skills/team-coffee/memory-link.md"));
    const all = fake.requests.map((r) => r.rawBody).join("\n");
    expect(all).not.toContain("MARZIPAN-77");
    expect(all).not.toContain("OBSIDIAN-9");
  });
});
