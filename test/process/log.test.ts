import { describe, expect, it } from "vitest";
import { createLogger, redact, registerSecret } from "../../src/process/log.ts";

function capture(isTTY: boolean) {
  const lines: string[] = [];
  return { lines, log: createLogger({ level: "debug", sink: { write: (l) => lines.push(l), isTTY } }) };
}

describe("logger", () => {
  it("writes one JSON line per event with its fields", () => {
    const { lines, log } = capture(false);
    log.child({ component: "gateway" }).info("gateway.ready", { pid: 42 });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "info", event: "gateway.ready", component: "gateway", pid: 42 });
  });

  it("writes a short readable line on a terminal", () => {
    const { lines, log } = capture(true);
    log.warn("model.retry", { attempt: 2 });
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} warn {2}model\.retry attempt=2\n$/);
  });

  it("never writes a registered secret, wherever it hides", () => {
    const secret = "123456:AAE-registered-bot-token-value";
    registerSecret(secret);
    const { lines, log } = capture(false);
    log.error("telegram.failed", { url: `https://api.telegram.org/bot${secret}/getUpdates`, error: new Error(`request to bot${secret} failed`) });
    log.info(`event mentioning ${secret}`);
    for (const l of lines) expect(l).not.toContain(secret);
    expect(lines.join("")).toContain("[redacted]");
    expect(redact(`x${secret}y`)).toBe("x[redacted]y");
  });

  it("redacts fields named like credentials even when the value was never registered", () => {
    const { lines, log } = capture(false);
    log.info("config.loaded", { token: "unregistered-value-1", apiKey: "unregistered-value-2", authorization: "Bearer abc" });
    expect(lines[0]).not.toMatch(/unregistered-value|Bearer abc/);
  });

  it("sends warnings and errors to the problem sink when there is one (pm2: info on stdout)", () => {
    const out: string[] = [];
    const err: string[] = [];
    const log = createLogger({ level: "debug", sink: { write: (l) => out.push(l) }, problemSink: { write: (l) => err.push(l) } });
    log.info("run.done", { session: "main" });
    log.debug("x");
    log.warn("model.retry");
    log.error("run.failed");
    expect(out.map((l) => JSON.parse(l).event)).toEqual(["run.done", "x"]);
    expect(err.map((l) => JSON.parse(l).event)).toEqual(["model.retry", "run.failed"]);
  });

  it("respects the level", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "warn", sink: { write: (l) => lines.push(l) } });
    log.debug("a");
    log.info("b");
    log.warn("c");
    expect(lines).toHaveLength(1);
  });
});
