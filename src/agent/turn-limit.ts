// The hard cap on model turns per run; apart from loop.ts so that config validation (which the
// thin CLI runs) does not load the agent loop.
export const MAX_TURNS_CAP = 100;
