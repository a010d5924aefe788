// One grant of grants.json: what it covers, where, in which chat, until when, and who allowed it.
// Apart from grants.ts (the file's store) so that connection-grants.ts, which grants.ts uses, can
// make and read grants without importing the store back.
import { z } from "zod";

export const grantSchema = z.object({
  /** The tool it covers: exec, send_file, cron_add…, or `connect` (a connection, egress). */
  tool: z.string().min(1),
  /**
   * `command`: a button's grant, `pattern` the call's one spelling (policy.ts ActionFacts.canonical;
   * a connection's: the tool and action that connects, `exec: <canonical command>` or `web_fetch
   * <URL>`); `pattern`: the owner's own, `*` matching within one command. A connection's wider
   * choices: `destination`, any command or fetch of the chat to `host`:`port` (pattern
   * `host:port`); `host`, the same to `host` on any port (pattern `host`).
   */
  kind: z.enum(["command", "pattern", "destination", "host"]),
  pattern: z.string().min(1),
  /** Where it acts: a folder, an SSH exec host (`placeOf`); a connection that acts in no folder (web_fetch, the wider kinds): the chat key. */
  folder: z.string().min(1),
  /** The chat it was made in (`chatKeyOf`): it covers runs of that chat only. */
  chat: z.string().min(1),
  /** Only towards this host (a tainted run's network access, a connection's destination); null: any host or none. */
  host: z.string().nullable(),
  /** A connection grant's port; null: any port (`host`), or not a connection. */
  port: z.number().int().min(1).max(65535).nullable(),
  /** Milliseconds since the epoch; null: until revoked ("Always"). */
  expiresAt: z.number().nullable(),
  /** Who approved it (the name the chat shows) and when. */
  by: z.string(),
  at: z.number(),
});
export type Grant = z.output<typeof grantSchema>;
