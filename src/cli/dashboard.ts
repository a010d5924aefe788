// `hearth dashboard [--url] [--rotate]`: a one-time login link to the running daemon's
// dashboard, opened in a browser when this machine has a desktop; `--url` only prints it;
// `--rotate` ends every dashboard session. The link is asked over the owner-only control socket.
import { spawn } from "node:child_process";
import { homePaths } from "../config/home.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { parse, UsageError } from "./args.ts";
import { connectDaemon } from "./client.ts";

interface DashboardIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runDashboard(home: string, args: string[], io: DashboardIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parse(args, { url: { type: "boolean" }, rotate: { type: "boolean" } });
  if (values.url && values.rotate) throw new UsageError("--url and --rotate do not go together.");
  const daemon = await connectDaemon(homePaths(home).socket);
  if (!daemon) {
    io.stderr.write(`hearth: Hearth is not running on ${home}, and the daemon serves the dashboard. Start it with: ${hearthCmd("start")}\n`);
    return 1;
  }
  try {
    if (values.rotate) {
      const { ended } = (await daemon.rpc("dashboard.rotate", {})) as { ended: number };
      io.stdout.write(`Ended ${ended === 1 ? "1 dashboard session" : `${ended} dashboard sessions`} and every unused login link. \`${hearthCmd("dashboard")}\` prints a new link.\n`);
      return 0;
    }
    const { url } = (await daemon.rpc("dashboard.login", {})) as { url: string };
    if (values.url) {
      io.stdout.write(`${url}\n`);
      return 0;
    }
    io.stdout.write(`${url}\nThe link logs in once and works for 10 minutes; keep it to yourself.\n`);
    if (openBrowser(url, env)) io.stdout.write("Opening it in your browser…\n");
    return 0;
  } finally {
    await daemon.close();
  }
}

/** Opens `url` with the desktop's opener when there is a desktop; false when there is none. */
function openBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  const opener = process.platform === "darwin" ? "open" : env.DISPLAY || env.WAYLAND_DISPLAY ? "xdg-open" : null;
  if (!opener) return false;
  try {
    const child = spawn(opener, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
