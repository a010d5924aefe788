// The egress room's one seam: the daemon makes one `Egress` from `config.egress`; a tool or an
// extension process gets its connections decided through it, either directly (`decide`, for
// Hearth's own requests such as web_fetch) or through a proxy of its own (`open`, for a sandboxed
// command or a stdio MCP server, which has no other way out).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Logger } from "../process/log.ts";
import { systemResolver, type Resolver } from "./addresses.ts";
import { decideEgress, isOwnDestination, type Destination, type EgressDecision, type EgressRules, type Requester } from "./policy.ts";
import { EgressProxy, type ConnectionRecord } from "./proxy.ts";
import { findSocat } from "./relay.ts";

export type { Destination, EgressDecision, EgressRules, Requester } from "./policy.ts";
export type { ConnectionRecord } from "./proxy.ts";

/** A connection as the audit log keeps it: what asked for it, and the session it served. */
export type EgressRecord = ConnectionRecord & { what: string; session: string };

export interface EgressOptions {
  /** The rules now; read for every connection, so a changed config applies to the next one. */
  rules: () => EgressRules;
  /** Injected by tests so that a name resolves without DNS. */
  resolve?: Resolver;
  /** Every connection, once decided (refused) or ended (connected). Must not throw. */
  record: (r: EgressRecord) => void;
  log: Logger;
  /** Where proxy sockets are made (a short path: a Unix socket's path holds at most 107 bytes). */
  socketRoot?: string;
  /** socat for the proxies' tunnels; default: found on PATH; null: Node pipes them (slower). */
  socat?: string | null;
}

/** A proxy opened for one requester: its socket, in a folder of its own to bind into a sandbox. */
export interface ProxySession {
  /** The folder that holds the socket (mode 700). */
  dir: string;
  /** The socket's file name inside `dir`. */
  socketName: string;
  /** Stops the proxy, ends its connections and removes the folder. */
  close(): Promise<void>;
}

export const PROXY_SOCKET_NAME = "proxy.sock";

export class Egress {
  readonly #o: EgressOptions;
  readonly #resolve: Resolver;
  readonly #socat: string | null;

  constructor(opts: EgressOptions) {
    this.#o = opts;
    this.#resolve = opts.resolve ?? systemResolver;
    this.#socat = opts.socat === undefined ? findSocat() : opts.socat;
  }

  /** Decides one connection of `requester` (serving `session`): where it may go, and the address to use. */
  async decide(dest: Destination, requester: Requester & { session: string }, signal: AbortSignal): Promise<EgressDecision> {
    const decision = await decideEgress(dest, requester, this.#o.rules(), this.#resolve, signal);
    if (decision.type === "refuse") this.#o.log.info("egress.refused", { host: dest.host, port: dest.port, what: requester.what, session: requester.session, reason: decision.reason });
    return decision;
  }

  /** Records a connection Hearth made itself after `decide` (web_fetch), as the proxy records its own. */
  record(r: EgressRecord): void {
    this.#o.record(r);
  }

  /**
   * Opens a proxy for `requester`: every connection made through it is decided for it and
   * recorded under `session`. The caller closes it when the process it serves has ended.
   */
  async open(requester: Requester & { session: string }): Promise<ProxySession> {
    const dir = mkdtempSync(path.join(this.#o.socketRoot ?? tmpdir(), "hearth-egress-"));
    const close = () => rmSync(dir, { recursive: true, force: true });
    try {
      const proxy = await EgressProxy.listen({
        socketPath: path.join(dir, PROXY_SOCKET_NAME),
        decide: (dest, signal) => this.decide(dest, requester, signal),
        record: (r) => this.#o.record({ ...r, what: requester.what, session: requester.session }),
        // The allow list says where a run may connect unasked, not whose words it may trust.
        opened: (dest) => {
          if (!isOwnDestination(this.#o.rules(), dest)) requester.tookIn?.(dest);
        },
        log: this.#o.log,
        socat: this.#socat,
      });
      return {
        dir,
        socketName: PROXY_SOCKET_NAME,
        close: async () => {
          await proxy.close();
          close();
        },
      };
    } catch (err) {
      close();
      throw err;
    }
  }
}
