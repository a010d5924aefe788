// The error of a configuration that cannot be used; its own file so that the loader and the
// migrations (which import each other's results) share it without an import cycle.
import { redact } from "../process/log.ts";

/** config.json is unreadable, not JSON, or fails validation. The CLI prints it and exits 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
  /** The config file. */
  readonly path: string;
  /** One `✖ problem → at key.path` block per problem. */
  readonly issues: string;
  constructor(file: string, issues: string) {
    const text = redact(issues);
    super(`${file}: invalid configuration\n${text}\nFix the file and try again (a key that is left out takes its default).`);
    this.path = file;
    this.issues = text;
  }
}
