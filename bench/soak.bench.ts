// A week in ten minutes (issue 45): the real daemon (`hearth start`, the daemon's node
// arguments) against the Bot API emulator, a model that answers at once (support/soak-model.ts)
// and a transcription service, with its clock running SOAK_FACTOR (1000) times faster
// (support/soak-clock.ts: `Date` and the calendar's timers), so that the days roll over: daily
// logs, usage days, backups, the heartbeat's active hours, cron.
//
// The load, all at once: the owner's DMs (a tool call in some: exec, the MCP server's echo,
// spawn_task, an exec the approvals ask about, answered or left to time out), voice notes and
// photos; SOAK_GROUPS (200) groups with chatter and mentions; 50 paired people; two cron jobs; the
// heartbeat; the dashboard polled; compactions (a small context window fills the sessions). Three
// clean restarts and one kill -9 in the first two sevenths; the last life runs five days, and the
// figures of memory, descriptors and latency are that life's after its warm-up (half a day).
//
// Opt-in (`npm run bench -- soak`): ten minutes. SOAK_DAYS=1 runs a day (about 90 s) for
// development.
import { DAEMON_ENV } from "../src/process/daemon-env.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeTranscription } from "../test/support/fake-transcription.ts";
import { picture } from "../test/support/media-files.ts";
import { startTelegramEmulator, type EmulatedUser } from "../test/support/telegram-emulator.ts";
import { percentile, round, type Figure } from "./harness.ts";
import { daemonNodeArgs } from "./support/daemon-args.ts";
import { alive, bytesUnder, commandOf, controlRpc, controlStatus, httpGet, median, sampleProcess, slope, type ProcSample } from "./support/soak-process.ts";
import { CRON_TEXT, startSoakModel } from "./support/soak-model.ts";

const FACTOR = Number(process.env.SOAK_FACTOR ?? 1000);
const DAYS = Number(process.env.SOAK_DAYS ?? 7);
const GROUPS = Number(process.env.SOAK_GROUPS ?? 200);
const PEOPLE = 50;
const OWNER = 100;
const DAY_WALL = 86_400_000 / FACTOR;
const bin = fileURLToPath(new URL("../bin/hearth.js", import.meta.url));
const clockPreload = new URL("./support/soak-clock.ts", import.meta.url).href;
const EVERYTHING = fileURLToPath(new URL("../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Kind = "dm" | "exec" | "mcp" | "task" | "approve" | "deny-timeout" | "voice" | "photo" | "paired" | "group";
interface Sent {
  n: number;
  kind: Kind;
  chat: number;
  /** performance.now() when sent (the model's clock for first requests). */
  at: number;
  wall: number;
  /** The daemon life it was sent in; -1 while no daemon was up. */
  life: number;
}
interface Row {
  life: number;
  wall: number;
  proc: ProcSample;
}
interface Probe {
  wall: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
  eldWarmP99: number | null;
  eldWarmP50: number | null;
  resources: Record<string, number>;
}

export async function soakBench(): Promise<Figure[]> {
  const model = await startSoakModel();
  const emu = await startTelegramEmulator({ chatActions: true });
  const stt = await startFakeTranscription();
  const base = mkdtempSync(join(tmpdir(), "hs-"));
  const home = join(base, "h");
  const logFile = join(base, "daemon.log");
  const probeFile = join(base, "probe.jsonl");
  mkdirSync(join(home, "workspace"), { recursive: true, mode: 0o700 });
  const groupIds = Array.from({ length: GROUPS }, (_, i) => -1_000_000_000_000 - i);
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      timezone: "UTC",
      // Small enough that long sessions compact within the week.
      model: { contextWindow: 24_000, maxTokens: 1024 },
      channels: {
        telegram: {
          apiRoot: emu.apiRoot,
          ownerIds: [String(OWNER)],
          dmPolicy: "pairing",
          maxPendingPairings: 100,
          groups: { policy: "allowlist", allow: groupIds.map(String), requireMention: true },
        },
      },
      approvals: { exec: "risky", ask: ["touch approve-*"], timeoutSeconds: 4 },
      heartbeat: { every: "30m", activeHours: { start: "07:00", end: "23:00" } },
      mcp: { servers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } } },
      dashboard: { enabled: true, port: 0 },
      backup: { every: "1d", keep: 7 },
      media: { transcription: { baseUrl: stt.baseUrl, model: "whisper-1" } },
    }),
    { mode: 0o600 },
  );
  writeFileSync(join(home, "workspace", "HEARTBEAT.md"), "- Remind the owner to stretch once in the afternoon.\n", { mode: 0o600 });

  const epoch = Date.now();
  const simStart = Date.UTC(new Date(epoch).getUTCFullYear(), new Date(epoch).getUTCMonth(), new Date(epoch).getUTCDate(), 6);
  const simNow = () => simStart + (Date.now() - epoch) * FACTOR;
  const endWall = epoch + DAYS * DAY_WALL;
  const warmMs = (1 / 14) * DAYS * DAY_WALL;
  const socketPath = join(home, "gateway.sock");
  const log = openSync(logFile, "a");

  let life = -1;
  let daemon: ChildProcess | undefined;
  const lifeStarts: number[] = [];
  const leftovers: string[] = [];
  const start = async (): Promise<ChildProcess> => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // As every supervisor starts it (src/process/daemon-env.ts).
      ...DAEMON_ENV,
      HEARTH_HOME: home,
      ANTHROPIC_API_KEY: "soak",
      ANTHROPIC_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: emu.token,
      HEARTH_SOAK_EPOCH: String(epoch),
      HEARTH_SOAK_START: String(simStart),
      HEARTH_SOAK_FACTOR: String(FACTOR),
      HEARTH_SOAK_PROBE: probeFile,
      HEARTH_SOAK_WARM_MS: String(warmMs),
    };
    delete env.HEARTH_LOG;
    // SOAK_HEAPSNAP=1: heap snapshots into the run's folder after warm-up and at the end (for finding a leak; they pause the daemon).
    const snap = process.env.SOAK_HEAPSNAP ? ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${base}`] : [];
    const child = spawn(process.execPath, [...daemonNodeArgs(), ...snap, "--import", clockPreload, bin, "start"], { env, stdio: ["ignore", log, log, "ipc"] });
    await new Promise<void>((resolve, reject) => {
      child.on("error", reject);
      child.on("exit", (code) => reject(new Error(`hearth start exited with ${code} before ready; see ${logFile}`)));
      child.on("message", (m) => {
        if (m !== "ready") return;
        child.removeAllListeners("exit");
        resolve();
      });
    });
    life = lifeStarts.push(Date.now()) - 1;
    daemon = child;
    return child;
  };
  /** SIGTERM (clean) or SIGKILL; then checks that none of its children outlived it. */
  const stop = async (signal: "SIGTERM" | "SIGKILL"): Promise<number | string | null> => {
    const child = daemon!;
    const children = sampleProcess(child.pid!)?.children ?? [];
    life = -1;
    const exited = new Promise<number | string | null>((r) => child.once("exit", (code, sig) => r(code ?? sig)));
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const code = await exited;
    clearTimeout(timer);
    await sleep(2000);
    for (const pid of children) if (alive(pid)) leftovers.push(`${pid} ${commandOf(pid)} (after ${signal})`);
    return code;
  };

  const sent: Sent[] = [];
  let next = 1;
  const tag = (kind: Kind, chat: number): number => {
    const n = next++;
    sent.push({ n, kind, chat, at: performance.now(), wall: Date.now(), life });
    return n;
  };
  const date = () => ({ date: Math.floor(simNow() / 1000) });
  const send = (u: EmulatedUser, text: string) => u.send(text, date()).catch(() => 0);

  const owner = emu.user({ userId: OWNER, firstName: "Ann" });
  const people = Array.from({ length: PEOPLE }, (_, i) => emu.user({ userId: 1000 + i, firstName: `P${i}` }));
  const members = groupIds.map((id, g) => Array.from({ length: 3 }, (_, m) => emu.user({ userId: 5000 + g * 3 + m, firstName: `G${g}M${m}`, chat: { id, type: "supergroup", title: `Group ${g}` } })));

  // Approvals: an `approve` question's is answered by the owner, a `deny-timeout` one's times out
  // (approvals.timeoutSeconds); of the others (the MCP calls and tasks of a run that read an MCP
  // result are asked about too), every other one is answered.
  const toAnswer = new Set<number>();
  const seen = new Set<number>();
  let others = 0;
  emu.onBotActivity(({ message }) => {
    if (message.chatId !== String(OWNER) || !message.keyboard?.some((row) => row.some((b) => b.text === "Allow once")) || seen.has(message.messageId)) return;
    seen.add(message.messageId);
    const n = Number(/approve-(\d+)\.txt/.exec(message.text)?.[1] ?? Number.NaN);
    const answer = Number.isFinite(n) ? toAnswer.has(n) : others++ % 2 === 0;
    if (answer) setTimeout(() => void owner.press(message.messageId, "Allow once").catch(() => undefined), 300);
  });

  const photo = await picture("jpeg", 640, 480);
  const ownerSends = async (kind: Kind): Promise<void> => {
    const n = tag(kind, OWNER);
    if (kind === "voice") {
      stt.enqueue({ text: `q${n} is a voice note: how is the week going?` });
      const f = emu.addFile(new Uint8Array(4000).fill(7), { filePath: `voice/file_${n}.oga` });
      await owner.sendMedia({ voice: { ...f, duration: 3, mime_type: "audio/ogg" }, ...date() });
    } else if (kind === "photo") {
      const f = emu.addFile(photo, { filePath: `photos/file_${n}.jpg` });
      await owner.sendMedia({ photo: [{ ...f, width: 640, height: 480 }], caption: `q${n} what is in this picture?`, ...date() });
    } else {
      if (kind === "approve") toAnswer.add(n);
      const directive = kind === "dm" ? "" : ` do=${kind === "deny-timeout" ? "approve" : kind}`;
      await send(owner, `q${n}${directive} Please keep this in mind, item ${n}.`);
    }
  };
  /** Right after each start, one of everything the owner does: the warm-up then covers every code path's first use (sharp's libvips, the SDK, the MCP client…). */
  const tour = async () => {
    for (const kind of ["voice", "photo", "exec", "mcp", "task", "approve"] as const) {
      await ownerSends(kind);
      await sleep(300);
    }
  };
  const rows: Row[] = [];
  const dashboardHits = { ok: 0, failed: 0 };
  let stopping = false;

  try {
    await start();
    // 1. Pairing, one person at a time, approved as soon as the code shows: a code lives an
    //    hour, 3.6 s of wall time. One that expired anyway (a loaded machine) is asked for
    //    again after the cooldown (two more simulated hours).
    for (const p of people) {
      for (let attempt = 0; ; attempt++) {
        await send(p, "Hello, may I talk to you?");
        const deadline = Date.now() + 3000;
        let approved = false;
        while (!approved && Date.now() < deadline) {
          const { pending } = (await controlRpc(socketPath, "pairing.list")) as { pending: Array<{ code: string; userId: string }> };
          const mine = pending.find((x) => x.userId === String(p.userId));
          if (mine) approved = await controlRpc(socketPath, "pairing.approve", { code: mine.code }).then(() => true, () => false);
          else await sleep(50);
        }
        if (approved) break;
        if (attempt === 3) throw new Error(`pairing: person ${p.userId} could not be paired`);
        await sleep((3 * 3_600_000) / FACTOR);
      }
    }
    // 2. Cron: one job every ten simulated minutes (no delivery), one every six hours to the owner.
    await controlRpc(socketPath, "cron.add", { name: "soak-often", every: "10m", message: CRON_TEXT, deliver: "none" });
    await controlRpc(socketPath, "cron.add", { name: "soak-daily", cron: "0 */6 * * *", message: CRON_TEXT, deliver: `telegram:${OWNER}` });

    await tour();
    // 3. The load, until the week is over.
    const loops: Array<Promise<void>> = [];
    const every = (wallMs: number, fn: (i: number) => Promise<unknown> | void) =>
      loops.push(
        (async () => {
          for (let i = 0; Date.now() < endWall && !stopping; i++) {
            const t = Date.now();
            try {
              await fn(i);
            } catch (err) {
              process.stderr.write(`soak: ${String(err)}\n`);
            }
            await sleep(Math.max(0, wallMs - (Date.now() - t)));
          }
        })(),
      );
    every(1200, (i) => ownerSends(i % 60 === 11 ? "voice" : i % 60 === 41 ? "photo" : i % 20 === 9 ? (i % 40 === 9 ? "approve" : "deny-timeout") : i % 25 === 7 ? "task" : i % 10 === 3 ? "exec" : i % 10 === 6 ? "mcp" : "dm"));
    every(1000, (i) => {
      const p = people[i % PEOPLE]!;
      return send(p, `q${tag("paired", p.userId)} A question from a paired friend.`);
    });
    every(1500, (i) => {
      const g = (i * 7) % GROUPS;
      const m = members[g]![i % 3]!;
      return send(m, `@TestNameBot q${tag("group", m.chatId)} what do you think?`);
    });
    let chatter = 0;
    every(330, (i) => (chatter++, send(members[(i * 13) % GROUPS]![i % 3]!, `Just chatting in the group, line ${i}.`)));
    // The dashboard, polled the way an open tab would be (a login per daemon life).
    let cookie = "";
    let dashLife = -2;
    const pages = ["/", "/usage", "/schedule", "/people", "/tasks", "/memory", "/approvals", "/logs"];
    every(2000, async (i) => {
      if (life < 0) return;
      const status = (await controlStatus(socketPath)) as { dashboard: string | null };
      if (!status.dashboard) return;
      if (dashLife !== life) {
        const { url } = (await controlRpc(socketPath, "dashboard.login")) as { url: string };
        // As a browser opens a link: a login is refused to anything but a top-level page.
        const login = await httpGet(url, { "sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" });
        if (login.status !== 200) throw new Error(`dashboard login: ${login.status} ${login.body.slice(0, 200)}`);
        cookie = login.cookie;
        dashLife = life;
      }
      const res = await httpGet(new URL(pages[i % pages.length]!, status.dashboard).href, { cookie });
      if (res.status === 200) dashboardHits.ok++;
      else if (++dashboardHits.failed <= 3) process.stderr.write(`soak: dashboard ${res.status}: ${res.body.slice(0, 200)}\n`);
    });
    // The emulator keeps every update and every call: drop what the daemon has read.
    every(5000, () => {
      const stored = emu.server.storage.userMessages;
      const unread = stored.filter((u) => !u.isRead);
      stored.splice(0, stored.length, ...unread);
      emu.calls.splice(0, emu.calls.length);
    });
    every(1000, () => {
      if (life < 0 || !daemon) return;
      const proc = sampleProcess(daemon.pid!);
      if (proc) rows.push({ life, wall: Date.now(), proc });
    });
    // Restarts: clean at 1/14 and 3/14 and 4/14 of the week, kill -9 at 2/14.
    const exits: Array<{ signal: string; code: number | string | null }> = [];
    for (const [at, signal] of [[1, "SIGTERM"], [2, "SIGKILL"], [3, "SIGTERM"], [4, "SIGTERM"]] as const) {
      await sleep(Math.max(0, epoch + (at / 14) * DAYS * DAY_WALL - Date.now()));
      process.stderr.write(`soak: day ${round((Date.now() - epoch) / DAY_WALL, 2)}: ${signal}\n`);
      exits.push({ signal, code: await stop(signal) });
      await start();
      await tour();
      if (process.env.SOAK_HEAPSNAP && at === 4) setTimeout(() => daemon?.kill("SIGUSR2"), warmMs + 5000);
      // SOAK_SMAPS=1: the daemon's memory map after warm-up and at the end, region by region (with SOAK_KEEP).
      if (process.env.SOAK_SMAPS && at === 4) setTimeout(() => copySmaps(daemon!.pid!, join(base, "smaps-warm.txt")), warmMs);
    }
    await Promise.all(loops);

    // 4. Settle: every question answered (or three minutes: a loaded machine drains a backlog).
    const expected = sent;
    const answers = () => {
      const count = new Map<number, number>();
      for (const m of emu.botMessages()) for (const p of m.text.split("\n\n")) {
        const hit = /^Answered q(\d+)\.$/.exec(p.trim());
        if (hit) count.set(Number(hit[1]), (count.get(Number(hit[1])) ?? 0) + 1);
      }
      return count;
    };
    const settleDeadline = Date.now() + 180_000;
    while (Date.now() < settleDeadline) {
      const a = answers();
      if (expected.every((s) => (a.get(s.n) ?? 0) > 0)) break;
      await sleep(500);
    }
    await sleep(3000);
    stopping = true;
    if (process.env.SOAK_HEAPSNAP) {
      daemon!.kill("SIGUSR2");
      await sleep(15_000);
    }
    if (process.env.SOAK_SMAPS) copySmaps(daemon!.pid!, join(base, "smaps-end.txt"));
    const endProc = sampleProcess(daemon!.pid!);
    const endChildren = (endProc?.children ?? []).map((pid) => commandOf(pid));
    const simDays = (simNow() - simStart) / 86_400_000;

    exits.push({ signal: "SIGTERM", code: await stop("SIGTERM") });

    // 5. Disk, after the clean stop (the index's write-ahead log folded in).
    const files = (...names: string[]) => names.reduce((s, n) => s + bytesUnder(join(home, n)), 0);
    const disk = {
      transcripts: files("sessions"),
      inboxOutbox: files("inbox.jsonl", "outbox.jsonl"),
      usage: files("usage.jsonl"),
      logs: bytesUnder(logFile),
      index: files("index"),
      history: files("history.git"),
      workspace: files("workspace"),
      backups: files("backups"),
      total: bytesUnder(home),
    };

    // 6. Figures.
    const a = answers();
    const unanswered = expected.filter((s) => (a.get(s.n) ?? 0) === 0);
    const twice = expected.filter((s) => (a.get(s.n) ?? 0) > 1);
    const finalLife = lifeStarts.length - 1;
    const warmAt = lifeStarts[finalLife]! + warmMs;
    const steady = rows.filter((r) => r.life === finalLife && r.wall >= warmAt);
    const firstMinute = steady.filter((r) => r.wall < warmAt + 30_000);
    const lastMinute = steady.filter((r) => r.wall >= endWall - 30_000 && r.wall < endWall);
    const m = (rs: Row[], f: (p: ProcSample) => number) => median(rs.map((r) => f(r.proc)));
    const rssWarm = m(firstMinute, (p) => p.rssMb);
    const rssEnd = m(lastMinute, (p) => p.rssMb);
    const probes = readFileSync(probeFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Probe)
      .filter((p) => p.wall >= warmAt && p.wall < endWall && p.wall >= lifeStarts[finalLife]!);
    // The heap is a saw-tooth (a sample may fall before or after a collection): the slope of its
    // floor, the least heap in each of twenty stretches, is what stays.
    const stretch = (endWall - warmAt) / 20;
    const floors = new Map<number, Probe>();
    for (const p of probes) {
      const k = Math.floor((p.wall - warmAt) / stretch);
      if (!floors.has(k) || p.heapUsed < floors.get(k)!.heapUsed) floors.set(k, p);
    }
    const heapSlope = slope([...floors.values()].map((p) => [(p.wall - warmAt) / DAY_WALL, p.heapUsed / 1024 / 1024]));
    const timers = (ps: Probe[]) => median(ps.map((p) => p.resources.Timeout ?? 0));
    const timersWarm = timers(probes.filter((p) => p.wall < warmAt + 30_000));
    const timersEnd = timers(probes.filter((p) => p.wall >= endWall - 30_000));
    const eldP99 = probes.at(-1)?.eldWarmP99 ?? Number.NaN;
    const latencies = sent.filter((s) => s.life === finalLife && s.wall >= warmAt && model.firstSeen.has(s.n)).map((s) => ({ s, ms: model.firstSeen.get(s.n)! - s.at }));
    const sortedLat = latencies.map((x) => x.ms).sort((p, q) => p - q);
    const slowest = latencies.reduce<(typeof latencies)[number] | undefined>((w, x) => (!w || x.ms > w.ms ? x : w), undefined);
    const messages = sent.length + chatter + PEOPLE;
    const perMessage = (bytes: number) => round(bytes / messages, 0);
    const logText = readFileSync(logFile, "utf8");
    const events = (name: string) => logText.split(`"event":"${name}"`).length - 1;

    process.stderr.write(
      [
        `soak: ${round(simDays, 2)} simulated days in ${round((Date.now() - epoch) / 60_000, 1)} min; ${GROUPS} groups, ${PEOPLE} paired people`,
        `soak: ${sent.length} questions (${Object.entries(countBy(sent.map((s) => s.kind))).map(([k, v]) => `${k} ${v}`).join(", ")}), ~${messages - sent.length} chatter lines`,
        `soak: model requests ${JSON.stringify(model.counts)}, largest ${round(model.largestRequest / 1024, 1)} kB`,
        `soak: compactions ${events("compaction.done")}, backups ${events("backup.done")}, heartbeat runs ${events("heartbeat.ok") + events("heartbeat.delivered")} (${events("heartbeat.delivered")} delivered), cron runs ${events("cron.run_ok")} ok / ${events("cron.run_skipped")} skipped as late, approvals ${approvalsText(home)}, runs stopped as wedged ${events("run.inactive")}, dashboard pages ${dashboardHits.ok} ok / ${dashboardHits.failed} failed`,
        `soak: machine load average at the end ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")} (2 cores here; other work shares them)`,
        `soak: exits ${JSON.stringify(exits)}; children at the end: ${JSON.stringify(endChildren)}; left over: ${JSON.stringify(leftovers)}`,
        `soak: disk ${JSON.stringify(Object.fromEntries(Object.entries(disk).map(([k, v]) => [k, `${round(v / 1024 / 1024, 2)} MB`])))}`,
        `soak: unanswered ${JSON.stringify(unanswered.slice(0, 20))}; twice ${JSON.stringify(twice.slice(0, 20))}`,
        `soak: slowest first request ${slowest ? `${round(slowest.ms, 0)} ms for q${slowest.s.n} (${slowest.s.kind}); what the same chat sent in the 5 s before: ${JSON.stringify(sent.filter((x) => x.chat === slowest.s.chat && x.at < slowest.s.at && x.at > slowest.s.at - 5000).map((x) => `q${x.n} ${x.kind}`))}` : "none"}`,
        `soak: [life, day, RSS MB, anon MB, file MB, fds, sockets] ${JSON.stringify(rows.filter((_, i) => i % 20 === 0).map((r) => [r.life, round((r.wall - epoch) / DAY_WALL, 2), round(r.proc.rssMb, 0), round(r.proc.anonMb, 0), round(r.proc.fileMb, 0), r.proc.fds, r.proc.sockets]))}`,
        `soak: RSS anon ${round(m(firstMinute, (p) => p.anonMb), 1)} → ${round(m(lastMinute, (p) => p.anonMb), 1)} MB, file-backed ${round(m(firstMinute, (p) => p.fileMb), 1)} → ${round(m(lastMinute, (p) => p.fileMb), 1)} MB`,
        `soak: [day, heap MB, external MB, array buffers MB, RSS MB, timers] ${JSON.stringify(probes.filter((_, i) => i % 20 === 0).map((p) => [round((p.wall - epoch) / DAY_WALL, 2), round(p.heapUsed / 1048576, 1), round(p.external / 1048576, 1), round(p.arrayBuffers / 1048576, 1), round(p.rss / 1048576, 0), p.resources.Timeout ?? 0]))}`,
        `soak: event-loop delay since warm-up p50 ${probes.at(-1)?.eldWarmP50 ?? "?"} ms, p99 ${eldP99} ms (the monitor's 10 ms resolution included)`,
        "",
      ].join("\n"),
    );

    return [
      { name: "soak: simulated days", value: round(simDays, 2), unit: "d", target: round(DAYS * 0.95, 2), better: "higher" },
      { name: "soak: RSS after warm-up (last life)", value: round(rssWarm, 1), unit: "MB", target: 200 },
      { name: "soak: RSS at the end", value: round(rssEnd, 1), unit: "MB", target: 200 },
      { name: "soak: RSS growth, warm-up → end", value: round(rssEnd - rssWarm, 1), unit: "MB", target: 10 },
      { name: "soak: JS heap slope after warm-up (its floor)", value: round(heapSlope, 2), unit: "MB/day", target: 1 },
      { name: "soak: open fds change, warm-up → end (abs)", value: Math.abs(m(lastMinute, (p) => p.fds) - m(firstMinute, (p) => p.fds)), unit: "", target: 6 },
      { name: "soak: sockets change, warm-up → end (abs)", value: Math.abs(m(lastMinute, (p) => p.sockets) - m(firstMinute, (p) => p.sockets)), unit: "", target: 6 },
      { name: "soak: timers change, warm-up → end (abs)", value: Math.abs(timersEnd - timersWarm), unit: "", target: 6 },
      { name: "soak: child processes besides the MCP server at the end", value: endChildren.filter((c) => !c.includes("server-everything")).length, unit: "", target: 1 },
      { name: "soak: processes left after a stop or kill -9", value: leftovers.length, unit: "", target: 1 },
      { name: "soak: clean stops that exited 0", value: exits.filter((e) => e.signal === "SIGTERM" && e.code === 0).length, unit: "", target: exits.filter((e) => e.signal === "SIGTERM").length, better: "higher" },
      { name: "soak: home after the week, without backups", value: round((disk.total - disk.backups) / 1024 / 1024, 1), unit: "MB", target: 200 },
      { name: "soak: backups after the week", value: round(disk.backups / 1024 / 1024, 1), unit: "MB", target: 500 },
      { name: "soak: bytes per message, transcripts", value: perMessage(disk.transcripts), unit: "B", target: 8192 },
      { name: "soak: bytes per message, inbox + outbox", value: perMessage(disk.inboxOutbox), unit: "B", target: 1024 },
      { name: "soak: bytes per message, usage ledger", value: perMessage(disk.usage), unit: "B", target: 1024 },
      { name: "soak: bytes per message, daemon log (info)", value: perMessage(disk.logs), unit: "B", target: 4096 },
      { name: "soak: bytes per message, search index", value: perMessage(disk.index), unit: "B", target: 4096 },
      { name: "soak: bytes per message, memory history (git)", value: perMessage(disk.history), unit: "B", target: 4096 },
      { name: "soak: send → first model request p50", value: round(percentile(sortedLat, 50), 0), unit: "ms", target: 200 },
      { name: "soak: send → first model request p99", value: round(percentile(sortedLat, 99), 0), unit: "ms", target: 5000 },
      { name: "soak: event-loop delay p99 (from inside, soak-clock.ts)", value: round(eldP99 - 10, 1), unit: "ms", target: 100 },
      { name: "soak: questions never answered", value: unanswered.length, unit: "", target: 1 },
      { name: "soak: questions answered twice or more", value: twice.length, unit: "", target: 1 },
    ];
  } finally {
    stopping = true;
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) daemon.kill("SIGKILL");
    closeSync(log);
    await emu.stop();
    await model.close();
    await stt.close();
    if (!process.env.SOAK_KEEP) rmSync(base, { recursive: true, force: true });
    else process.stderr.write(`soak: kept ${base}\n`);
  }
}

/** What the approvals' audit log says happened to the questions (the MCP calls of a run that read an MCP result are asked too). */
function approvalsText(home: string): string {
  let lines: string[] = [];
  try {
    lines = readFileSync(join(home, "approvals.jsonl"), "utf8").split("\n").filter(Boolean);
  } catch {
    return "none asked";
  }
  const decisions = lines.map((l) => (JSON.parse(l) as { decision: string }).decision);
  const asked = decisions.filter((d) => d === "asked").length;
  return `asked ${asked} (${Object.entries(countBy(decisions.filter((d) => d !== "asked"))).map(([k, v]) => `${k.replace("_", " ")} ${v}`).join(", ")})`;
}

function copySmaps(pid: number, to: string): void {
  try {
    writeFileSync(to, readFileSync(`/proc/${pid}/smaps`, "utf8"));
  } catch (err) {
    process.stderr.write(`soak: smaps: ${String(err)}\n`);
  }
}

function countBy(xs: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
