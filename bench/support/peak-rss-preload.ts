// Loaded with `node --import` by runMeasured (gzip-bomb.ts): at exit, the process's peak RSS
// (VmHWM) is the last line of its stderr.
import { readFileSync, writeSync } from "node:fs";

process.on("exit", () => {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? "0";
  writeSync(2, `peak-rss-kb=${kb}\n`);
});
