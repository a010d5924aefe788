// Run by scale.bench.ts in its own process: opens a transcript (argv[3]) with the Transcript
// class of the source tree at argv[2] and prints the load time and the RSS after it.
const [srcRoot, file] = process.argv.slice(2) as [string, string];
const { Transcript } = (await import(`${srcRoot}/src/agent/transcript.ts`)) as typeof import("../../src/agent/transcript.ts");
const { silentLogger } = (await import(`${srcRoot}/src/process/log.ts`)) as typeof import("../../src/process/log.ts");
const t0 = performance.now();
const t = Transcript.open(file, "main", silentLogger);
const ms = performance.now() - t0;
const view = t.messages().length;
process.stdout.write(`${JSON.stringify({ ms, rssMb: process.memoryUsage().rss / 1024 / 1024, view })}\n`);
