// The terminal (`hearth chat`, the dashboard's Chat) as Hearth knows it: always there, the owner
// only, no configuration and no credentials. Its adapter (channel.ts) is made by the gateway
// itself, beside the control socket its clients connect to.
import type { ChannelDescriptor } from "../descriptor.ts";

export const terminal: ChannelDescriptor<never, "cli"> = {
  id: "cli",
  name: "terminal",
  // A client prints the answer as it comes and never edits it; a question is answered by typing its
  // number; a file (a voice note too) is attached by path; a file out is named by its path.
  capabilities: { edits: false, buttons: false, reactions: false, threads: false, filesIn: true, filesOut: false, voiceIn: true, voiceOut: false, maxMessageLength: Number.POSITIVE_INFINITY, groups: false, strangers: false },
};
