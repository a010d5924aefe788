// `hearth pairing list | approve CODE | revoke CHANNEL:USERID`: through the daemon when it
// runs (it holds the pairing state), directly on pairing.json otherwise.
import { CHANNELS as REGISTRY } from "../channels/registry.ts";
import type { ChannelId } from "../channels/channel.ts";
import { describeDamaged, listDamaged } from "../gateway/upkeep/damaged-state.ts";
import { homePaths } from "../config/home.ts";
import { PairingStore, type ApprovedSender, type PendingPairing } from "../gateway/access/pairing.ts";
import { createLogger } from "../process/log.ts";
import { connectDaemon } from "./client.ts";
import { parse, UsageError } from "./args.ts";
import { hearthCmd } from "../process/hearth-command.ts";

interface PairingIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** The channels where strangers can ask to pair. */
const CHANNELS: ChannelId[] = REGISTRY.filter((c) => c.capabilities.strangers).map((c) => c.id);

export type PairingAction =
  | { action: "list" }
  | { action: "approve"; code: string }
  | { action: "revoke"; channel: ChannelId; userId: string };

/** Checks the command line; throws UsageError. Touches nothing (no socket, no file). */
export function parsePairing(args: string[]): PairingAction {
  const { positionals } = parse(args, {}, true);
  const [action, arg, ...extra] = positionals;
  switch (action) {
    case "list":
      if (arg !== undefined) throw new UsageError(`pairing list takes no argument (got "${arg}").`);
      return { action: "list" };
    case "approve":
      if (!arg) throw new UsageError("pairing approve needs the code: pairing approve CODE");
      if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);
      return { action: "approve", code: arg };
    case "revoke": {
      const m = /^([a-z]+):(.+)$/.exec(arg ?? "");
      if (!m || !CHANNELS.includes(m[1] as ChannelId)) {
        throw new UsageError(`pairing revoke needs CHANNEL:USERID, with CHANNEL one of ${CHANNELS.join(", ")} (e.g. telegram:123456).`);
      }
      if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);
      return { action: "revoke", channel: m[1] as ChannelId, userId: m[2]! };
    }
    default:
      throw new UsageError(action ? `Unknown pairing action "${action}". Use list, approve or revoke.` : "pairing needs an action: list, approve or revoke.");
  }
}

export async function runPairing(home: string, args: string[], io: PairingIO): Promise<number> {
  const cmd = parsePairing(args);
  const call = await pairingCall(home);
  switch (cmd.action) {
    case "list": {
      const { pending, approved } = (await call("pairing.list", {})) as { pending: PendingPairing[]; approved: ApprovedSender[] };
      io.stdout.write(`Pending codes${pending.length ? "" : ": none"}\n`);
      for (const p of pending) io.stdout.write(`  ${p.code}  ${p.channel}:${p.userId}  ${p.name}  (asked ${new Date(p.createdAt).toISOString()})\n`);
      io.stdout.write(`Approved senders${approved.length ? "" : ": none"}\n`);
      for (const a of approved) io.stdout.write(`  ${a.channel}:${a.userId}  ${a.name}\n`);
      for (const d of listDamaged(home).filter((x) => x.file === "pairing.json")) io.stderr.write(`Note: ${describeDamaged(d)}.\n`);
      return 0;
    }
    case "approve": {
      const a = (await call("pairing.approve", { code: cmd.code })) as ApprovedSender;
      io.stdout.write(`Approved ${a.name} (${a.channel}:${a.userId}). They now have their own private conversation with Hearth.\n`);
      return 0;
    }
    case "revoke":
      await call("pairing.revoke", { channel: cmd.channel, userId: cmd.userId });
      io.stdout.write(`Revoked ${cmd.channel}:${cmd.userId}.\n`);
      return 0;
    default:
      cmd satisfies never;
      return 2;
  }
}

type Call = (method: string, params: Record<string, string>) => Promise<unknown>;

async function pairingCall(home: string): Promise<Call> {
  const paths = homePaths(home);
  const daemon = await connectDaemon(paths.socket);
  if (daemon) {
    return async (method, params) => {
      try {
        return await daemon.rpc(method, params);
      } finally {
        await daemon.close();
      }
    };
  }
  const store = PairingStore.open(paths.pairing, createLogger({ level: "warn" }));
  return async (method, params) => {
    switch (method) {
      case "pairing.list":
        return store.list();
      case "pairing.approve": {
        const a = store.approve(params.code!);
        if (!a) throw new Error(`No pending pairing code "${params.code}". Codes expire after an hour; \`${hearthCmd("pairing list")}\` shows the pending ones.`);
        return a;
      }
      case "pairing.revoke":
        if (!store.revoke(params.channel as ChannelId, params.userId!)) throw new Error(`${params.channel}:${params.userId} is not an approved sender.`);
        return {};
      default:
        throw new Error(`unknown method ${method}`);
    }
  };
}
