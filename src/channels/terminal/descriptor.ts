// The terminal (`hearth chat`, the dashboard's Chat) as Hearth knows it: always there, the owner
// only, no configuration and no credentials. Its adapter (channel.ts) is made by the gateway
// itself, beside the control socket its clients connect to.
import type { ChannelDescriptor } from "../descriptor.ts";

export const terminal: ChannelDescriptor<never, "cli"> = {
  id: "cli",
  name: "terminal",
  // The answer streams as it is written; choices are asked in the chat; a file is attached by path.
  capabilities: { edits: true, buttons: true, reactions: false, threads: false, filesIn: true, filesOut: false, voiceIn: false, voiceOut: false, maxMessageLength: Number.MAX_SAFE_INTEGER, groups: false, strangers: false },
};
