// Command-line parsing and the error that means "bad usage" (exit code 2).
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";

/** The command line itself is wrong; the message says what is accepted. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Strict option parsing: an unknown option or a missing value is a UsageError. */
export function parse<O extends ParseArgsOptionsConfig>(args: string[], options: O, positionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: positionals });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
