// The version of config.json this Hearth writes and reads, on its own so that the schema (which
// pins it) and the migrations (which read the schema's secret marks) need not import each other.
export const CONFIG_VERSION = 3;
