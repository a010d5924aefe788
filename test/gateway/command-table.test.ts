// The one command table: /help, the menus and the slash commands say the same thing.
import { describe, expect, it } from "vitest";
import type { CommandDeps } from "../../src/gateway/commands.ts";
import { commandMenu, handleCommand, slashCommands, type CommandOrigin } from "../../src/gateway/commands.ts";

const origin = { sessionKey: "main", scope: "main", isOwner: true } as CommandOrigin;

describe("the command table", () => {
  it("/help lists exactly the owner's menu, one line each, with its usage and aliases", async () => {
    const help = (await handleCommand({} as CommandDeps, { name: "help", args: "" }, origin)) ?? "";
    const lines = help.split("\n").slice(1);
    expect(help.split("\n")[0]).toBe("Commands:");
    expect(lines.map((l) => /^\/(\w+)/.exec(l)?.[1])).toEqual(commandMenu("owner").map((c) => c.name));
    expect(lines).toContain("/new (or /reset) — start a fresh conversation (the old one stays on disk)");
    expect(lines).toContain("/budget [raise N] — spending against the limits; raise today's limit by N dollars (owner)");
  });

  it("everyone's menu is the owner's without the owner's own commands; slash commands are owner's menu entries", () => {
    const owner = commandMenu("owner");
    expect(commandMenu("everyone")).toEqual(owner.filter((c) => !["voice", "budget", "grants", "tasks", "private", "undo"].includes(c.name)));
    for (const s of slashCommands()) expect(owner.find((c) => c.name === s.name)?.description).toBe(s.description);
    expect(slashCommands().map((c) => c.name)).toEqual(["stop", "new", "status", "compact", "model", "budget", "grants"]);
  });

  it("/start (Telegram's first message) answers with the help; hidden from the menus", async () => {
    const start = await handleCommand({} as CommandDeps, { name: "start", args: "" }, origin);
    expect(start).toBe(await handleCommand({} as CommandDeps, { name: "help", args: "" }, origin));
    expect(commandMenu("owner").some((c) => c.name === "start" || c.name === "approve")).toBe(false);
  });
});
