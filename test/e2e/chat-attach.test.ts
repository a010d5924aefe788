// `hearth chat -m "…" --attach FILE` (embedded gateway, real process): the file reaches the
// model like any attachment, stored in the workspace's media folder.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hearthBin, isolatedEnv, repoRoot, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";
import { pdf, picture } from "../support/media-files.ts";

let fake: FakeModel;
let home: string;
let files: string;
let daemon: Daemon | undefined;
beforeEach(async () => {
  daemon = undefined;
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-e2e-"));
  files = mkdtempSync(join(tmpdir(), "hearth-attach-"));
});
afterEach(async () => {
  await cleanupDaemon(daemon);
  await fake.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

const writeConfig = (config: unknown) => writeFileSync(join(home, "config.json"), JSON.stringify(config), { mode: 0o600 });
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

  it("a text file reaches the model as its text", async () => {
    writeFileSync(join(files, "notes.md"), "# Notes\n\nbuy milk\n");
    fake.enqueue(text("Milk it is."));
    const r = await runHearth(["chat", "-m", "summarise", "--attach", join(files, "notes.md")], env());
    expect([r.stdout, r.code]).toEqual(["Milk it is.\n", 0]);
    const texts = lastUserContent(fake.requests[0]!).filter((b) => b.type === "text").map((b) => String(b.text));
    const file = texts.find((t) => t.startsWith("[file notes.md"));
    expect(file!.split("\n").slice(1)).toEqual(["# Notes", "", "buy milk", ""]);
  });

  it("bad input: an unsupported type, a corrupt picture and an over-size file each get one sentence, no model call, exit code 1", async () => {
    writeConfig({ media: { maxBytes: 10_000 } });
    writeFileSync(join(files, "a.zip"), new Uint8Array([80, 75, 3, 4]));
    writeFileSync(join(files, "broken.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    writeFileSync(join(files, "big.txt"), new Uint8Array(20_000));
    const cases: Array<[string, string]> = [
      ["a.zip", "I can't read .zip files yet; I understand pictures, PDFs and text files."],
      ["broken.png", "I couldn't open the picture broken.png: the file seems damaged."],
      ["big.txt", "big.txt is too large for me (20 KB); the limit is 10 KB."],
    ];
    for (const [name, sentence] of cases) {
      const r = await runHearth(["chat", "-m", "look", "--attach", join(files, name)], env());
      expect([r.stdout, r.code]).toEqual([`${sentence}\n`, 1]);
    }
    expect(fake.requests).toHaveLength(0);
  });

  describe("with transcription configured", () => {
    let stt: FakeTranscription;
    beforeEach(async () => {
      stt = await startFakeTranscription();
    });
    afterEach(() => stt.close());

    for (const mode of ["embedded", "daemon"] as const) {
      it(`an audio file: the transcription server gets its bytes, the model the transcript, stderr what was heard (${mode})`, async () => {
        writeConfig({ media: { transcription: { baseUrl: stt.baseUrl, apiKey: "stt-key", model: "whisper-1" } } });
        if (mode === "daemon") daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
        const audio = new Uint8Array([79, 103, 103, 83, 5, 6, 7]);
        writeFileSync(join(files, "memo.ogg"), audio);
        stt.enqueue({ text: "Call the plumber." });
        fake.enqueue(text("Noted."));
        const r = await runHearth(["chat", "-m", "", "--attach", join(files, "memo.ogg")], env());
        // What was heard is a note on stderr; stdout is the answer alone.
        expect([r.stdout, r.code]).toEqual(["Noted.\n", 0]);
        expect(r.stderr).toBe("🎤 heard: Call the plumber.\n");
        expect(stt.requests.map((q) => [q.fileName, Buffer.from(q.file).equals(Buffer.from(audio))])).toEqual([["memo.ogg", true]]);
        expect(String(lastUserContent(fake.requests[0]!)[0]!.text).split("\n").at(-1)).toBe("[voice note, transcribed] Call the plumber.");
      });
    }
  });

  it("a transcription that takes longer than a few seconds prints one note that Hearth is still working, then what was heard", async () => {
    const stt = await startFakeTranscription();
    try {
      writeConfig({ media: { transcription: { baseUrl: stt.baseUrl, model: "whisper-1" } } });
      writeFileSync(join(files, "long.ogg"), new Uint8Array([79, 103, 103, 83, 9]));
      stt.enqueue({ text: "A long story.", delayMs: 5_000 });
      fake.enqueue(text("Got it."));
      const r = await runHearth(["chat", "-m", "", "--attach", join(files, "long.ogg")], env(), { timeoutMs: 30_000 });
      expect([r.stdout, r.stderr, r.code]).toEqual(["Got it.\n", "(still working on the attached files…)\n🎤 heard: A long story.\n", 0]);
    } finally {
      await stt.close();
    }
  });

  it("interactive: `/attach PATH` alone goes with the next message, and only that one", async () => {
    const png = await picture("png");
    writeFileSync(join(files, "chart.png"), png);
    fake.enqueue(text("A square."));
    fake.enqueue(text("Nothing new."));
    const child = spawn(process.execPath, [hearthBin, "chat"], { env: env(), cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    try {
      child.stdin.write(`/attach ${join(files, "chart.png")}\n`);
      await waitFor("the attach note", () => stderr.includes("goes with your next message"), 20_000);
      expect(fake.requests).toHaveLength(0);
      child.stdin.write("what is this?\n");
      await waitFor("the first answer", () => stdout === "A square.\n", 20_000);
      child.stdin.write("anything else?\n");
      await waitFor("the second answer", () => stdout === "A square.\nNothing new.\n", 20_000);
      child.stdin.end();
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(stderr).toBe("(chart.png goes with your next message)\n");
    const first = lastUserContent(fake.requests[0]!);
    expect(first.filter((b) => b.type === "image").map((b) => (b.source as { data: string }).data)).toEqual([Buffer.from(png).toString("base64")]);
    expect(String(first[0]!.text).split("\n").at(-1)).toBe("what is this?");
    expect(lastUserContent(fake.requests[1]!).filter((b) => b.type === "image")).toEqual([]);
  });
});
