// The environment the daemon runs with, however it is started: `npm start` and `hearth start`
// (bin/hearth.js adds what is missing before anything runs), pm2's ecosystem.config.cjs, the
// systemd unit and the background launcher. One list, package.json's config.daemonEnv.
//
// Both settings are glibc's allocator, read once when the process starts:
// - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates its own arena and keeps what an
//   arena once held; libuv's file threads, zlib and sharp spread the daemon's native allocations
//   over up to 8 × cores arenas, and the week-long soak saw RSS grow 21 MB outside the JS heap.
// - MALLOC_MMAP_THRESHOLD_=131072: blocks of 128 KB and more come from their own mappings,
//   returned whole when freed. Left to itself glibc raises that threshold after the first large
//   block freed (the soak's daemon had reached 7 MB), so every later buffer below it came from
//   the main heap, whose high-water mark it never gives back: RSS stepped up for good.
// `npm run bench -- soak` measures both.
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { config?: { daemonEnv?: Record<string, string> } };

export const DAEMON_ENV: Readonly<Record<string, string>> = Object.freeze({ ...pkg.config?.daemonEnv });
