// Errors the CLI maps to exit codes (DESIGN §10): 2 for bad usage or configuration.

/** The command line itself is wrong; the message says what is accepted. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
