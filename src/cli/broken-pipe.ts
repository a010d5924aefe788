// `hearth doctor | head -1`: once the reader of stdout (or stderr) is gone, there is nobody left
// to tell anything, so a command ends quietly instead of dying with an EPIPE stack trace. The
// daemon instead keeps running: its work does not depend on anyone reading its output.
export function handleBrokenPipes(mode: "exit" | "ignore", streams: NodeJS.WritableStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      if (mode === "exit") process.exit(process.exitCode ?? 0);
    });
  }
}
