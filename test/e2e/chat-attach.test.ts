// `hearth chat -m "…" --attach FILE` (embedded gateway, real process): the file reaches the
// model like any attachment, stored in the workspace's media folder.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { lastUserContent, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { pdf, picture } from "../support/media-files.ts";

let fake: FakeModel;
let home: string;
let files: string;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-e2e-"));
  files = mkdtempSync(join(tmpdir(), "hearth-attach-"));
});
afterEach(async () => {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

const env = () => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });

describe("hearth chat --attach", () => {
  it("a picture and a PDF attached to one message become an image block and a document block", async () => {
    const png = await picture("png");
    const doc = pdf(1);
    writeFileSync(join(files, "chart.png"), png);
    writeFileSync(join(files, "report.pdf"), doc);
    fake.enqueue(text("Got both."));
    const r = await runHearth(["chat", "-m", "compare these", "--attach", join(files, "chart.png"), "--attach", join(files, "report.pdf")], env());
    expect(r.stdout.trim()).toBe("Got both.");
    expect(r.code).toBe(0);
    const content = lastUserContent(fake.requests[0]!);
    expect(content.filter((b) => b.type === "image" || b.type === "document").map((b) => (b.source as { data: string }).data)).toEqual([
      Buffer.from(png).toString("base64"),
      Buffer.from(doc).toString("base64"),
    ]);
    // The two files, each stored once (the PDF's text for search, <pdf>.txt, may follow in the background).
    expect(readdirSync(join(home, "workspace", "media", new Date().toISOString().slice(0, 7))).filter((f) => !f.endsWith(".pdf.txt"))).toHaveLength(2);
  });

  it("a missing file is a usage error, before anything is sent", async () => {
    const r = await runHearth(["chat", "-m", "x", "--attach", join(files, "nope.png")], env());
    expect(r.stderr.split("\n")[0]).toBe(`hearth: Cannot attach ${join(files, "nope.png")}: no such file.`);
    expect(r.code).toBe(2);
    expect(fake.requests).toHaveLength(0);
  });
});
