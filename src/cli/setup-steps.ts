// The steps `hearth setup` shares between its flags (setup.ts), its wizard (setup-interactive.ts)
// and its mail part (setup-email.ts): installing a channel's libraries, writing the answers,
// starting under pm2, and what to do next.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { installCommand, installPackages, missingPackages, packagesDir, usePackagesOf } from "../channels/packages.ts";
import type { ChannelDescriptor, SetupSender } from "../channels/descriptor.ts";
import { homePaths } from "../config/home.ts";
import { modelName, writeSetup, type SetupAnswers } from "../config/setup-config.ts";
import { liveHolder } from "../gateway/upkeep/lock.ts";
import { hearthCmd, startCmd } from "../process/hearth-command.ts";
import { createLogger } from "../process/log.ts";
import type { Io } from "./io.ts";

export const OWNER_GREETING = "Hearth: you are now this bot's owner. Once Hearth runs, talk to it here.";

const say = (io: Io, line: string) => io.stdout.write(`${line}\n`);

/**
 * What to do once setup wrote its answers: start Hearth, or restart the one running (a daemon
 * reads config.json and .env when it starts, so it does not have what setup changed), and where
 * the dashboard is once it was turned on. `asService` follows the start command.
 */
export function nextSteps(home: string, answers: SetupAnswers, asService = ""): string[] {
  const running = liveHolder(homePaths(home).lock);
  return [
    running ? `Hearth is running (pid ${running.pid}) with the settings it started with: \`${hearthCmd("restart")}\` makes it read these.` : `Next: ${startCmd()}${asService}`,
    ...(answers.dashboard ? [`The dashboard: \`${hearthCmd("dashboard")}\` opens it, once Hearth ${running ? "has restarted" : "runs"}.`] : []),
  ];
}

/** A sender as the wizard shows them; the names are printable already (setup-checks.ts, setup-discord.ts). */
export function describeSender(s: SetupSender): string {
  return `${s.name}${s.username ? ` (@${s.username}, id ${s.id})` : ` (id ${s.id})`}`;
}

/**
 * Installs the channel's libraries into the home when Hearth's install lacks them (packages.ts)
 * and lets this process load them; null when they are there, else why not.
 */
export async function ensurePackages(home: string, c: ChannelDescriptor, io: Io): Promise<string | null> {
  const missing = missingPackages(home, c);
  if (missing.length > 0) {
    say(io, `… installing ${c.name}'s libraries (${missing.join(", ")}) into ${packagesDir(home)}`);
    const r = await installPackages(home, missing);
    if (r.code !== 0) return `npm could not install ${missing.join(", ")} (exit ${r.code}): ${r.output.trim().split("\n").at(-1) ?? ""}; try: ${installCommand(home, missing)}`;
  }
  usePackagesOf(home);
  return null;
}

/** Writes the answers and says where. */
export function finish(home: string, answers: SetupAnswers, io: Io): void {
  const log = createLogger({ level: "warn", sink: { write: (l) => io.stderr.write(l) } });
  const file = writeSetup(home, answers, log);
  const paths = homePaths(home);
  const keys = Object.keys(answers.channels).length > 0 || ("apiKey" in answers.model && answers.model.apiKey);
  say(io, `✓ wrote ${file} (model ${modelName(answers.model)})${keys ? `; keys and tokens in ${paths.secrets} (mode 600)` : ""}`);
}

/** Starts the daemon under pm2 with this home, and saves pm2's list so a reboot brings it back. */
export function installPm2(home: string, io: Io): number {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const pm2 = `${root}node_modules/.bin/pm2`;
  const env = { ...process.env, HEARTH_HOME: home };
  for (const args of [["start", "ecosystem.config.cjs"], ["save"]]) {
    const r = spawnSync(pm2, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
    if (r.status !== 0) {
      io.stdout.write(`✗ pm2 ${args.join(" ")} failed; run it yourself in ${root}: npx pm2 ${args.join(" ")}\n`);
      return 1;
    }
  }
  say(io, "✓ Hearth runs under pm2 (npx pm2 startup makes pm2 itself start at boot).");
  return 0;
}
