// The size limit on one incoming message, shared by the router and the CLI (which checks it
// before connecting, without loading the router).

/** Longer messages are refused (about 25k tokens): paste big material into a workspace file. */
export const MAX_MESSAGE_CHARS = 100_000;

export const tooLongText = (chars: number): string =>
  `That message is too long for me (${chars.toLocaleString("en-US")} characters; the limit is ${MAX_MESSAGE_CHARS.toLocaleString("en-US")}). Put the material in a file in my workspace and ask me to read it.`;
