// The environment the daemon runs with under every supervisor that starts it (pm2's
// ecosystem.config.cjs, the systemd unit, `hearth start` in the background). glibc gives each
// thread that allocates its own malloc arena and keeps what an arena once held: libuv's file
// threads, zlib and sharp spread the daemon's native allocations over up to 8 × cores arenas,
// and the week-long soak saw RSS grow 21 MB outside the JS heap. Two arenas held it to 8 MB with
// no change in latency (`npm run bench -- soak`).
export const DAEMON_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2" };
