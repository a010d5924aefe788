// A write that failed for want of space, and what the owner is told then.

/** ENOSPC (no space left) or EDQUOT (quota exceeded): the write failed for want of space. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** Hearth cannot start (or go on) because the disk that holds its home folder is full. */
export class DiskFullError extends Error {
  override name = "DiskFullError";
  readonly home: string;
  constructor(home: string, cause: unknown) {
    super(
      `The disk that holds Hearth's home folder ${home} is full (${(cause as Error).message}). ` +
        `Free some space on it (\`df -h ${home}\` shows how much is left), then start Hearth again; accepted messages are kept and answered then.`,
      { cause },
    );
    this.home = home;
  }
}

export const DISK_FULL_REPLY = "Hearth's disk is full; your message is kept and will be answered when there is space.";
/** When even accepting the message failed: nothing of it is on disk, so it cannot be kept. */
export const DISK_FULL_NOT_SAVED = "Hearth's disk is full, so this message could not be saved. Please send it again once there is space.";

/** What the user is told when a run failed inside Hearth (not at the model) with `err`. */
export function internalErrorText(err: unknown): string {
  if (isDiskFull(err)) return DISK_FULL_REPLY;
  return "Something went wrong inside Hearth while answering. Please try again.";
}
