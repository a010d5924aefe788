// `hearth tasks [ID] [--json]`, `hearth tasks cancel ID`: the daemon's background tasks — running
// ones and recent ones, one in detail with its progress lines and result — and stopping one.
import { loadConfig } from "../config/config.ts";
import { systemTimeZone } from "../fields/config-fields.ts";
import { homePaths } from "../config/home.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { localDate, localTime } from "../process/time.ts";
import { taskDetailText, taskListText, type TaskView } from "../tasks/view.ts";
import { parse, UsageError } from "./args.ts";
import { connectDaemon } from "./client.ts";

interface TasksIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runTasks(home: string, args: string[], io: TasksIO): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: "boolean" } }, true);
  const cancel = positionals[0] === "cancel";
  if (cancel ? positionals.length !== 2 : positionals.length > 1) {
    throw new UsageError(cancel ? "tasks cancel needs exactly one task id: tasks cancel ID." : "tasks takes at most one task id: tasks [ID].");
  }
  const daemon = await connectDaemon(homePaths(home).socket);
  if (!daemon) {
    io.stderr.write(`hearth: Hearth is not running on ${home}; background tasks live in the daemon. Start it with: ${hearthCmd("start")}\n`);
    return 1;
  }
  try {
    const json = values.json === true;
    if (cancel) {
      const v = (await daemon.rpc("tasks.cancel", { id: positionals[1] })) as TaskView;
      io.stdout.write(json ? `${JSON.stringify(v, null, 2)}\n` : `Cancelling task ${v.id} ("${v.label}"); its chat will be told once it has stopped.\n`);
      return 0;
    }
    const id = positionals[0];
    if (id === undefined) {
      const list = (await daemon.rpc("tasks.list", {})) as TaskView[];
      io.stdout.write(json ? `${JSON.stringify(list, null, 2)}\n` : `${taskListText(list)}\n`);
      return 0;
    }
    const v = (await daemon.rpc("tasks.get", { id })) as TaskView;
    const tz = timezoneOf(home);
    io.stdout.write(json ? `${JSON.stringify(v, null, 2)}\n` : `${taskDetailText(v, (at) => `${localDate(at, tz)} ${localTime(at, tz)}`)}\n`);
    return 0;
  } finally {
    await daemon.close();
  }
}

function timezoneOf(home: string): string {
  try {
    return loadConfig({ home }).timezone;
  } catch {
    return systemTimeZone();
  }
}
