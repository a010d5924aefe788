// The node arguments the daemon really runs with: `npm start` and pm2 (ecosystem.config.cjs)
// both take them from package.json's config.daemonNodeArgs. Benchmarks start it the same way, with
// its environment (src/process/daemon-env.ts).
import { readFileSync } from "node:fs";

export function daemonNodeArgs(): string[] {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { config?: { daemonNodeArgs?: string } };
  return (pkg.config?.daemonNodeArgs ?? "").split(/\s+/).filter(Boolean);
}
