// End-to-end encryption for the Matrix channel: matrix-js-sdk's Rust crypto (WebAssembly), its
// state for `hearth status` (whether encryption runs, and whether the owner verified the bot's
// device by emoji, verification.ts), and the SDK's log routed into Hearth's at debug level.
//
// The crypto store (the device's keys, its sessions, the room keys) is kept in the home between
// runs (crypto-store.ts), so a restart is the same device with the same keys.
import type { MatrixClient } from "matrix-js-sdk";
import { CryptoEvent } from "matrix-js-sdk/lib/crypto-api/index.js";
import { logger as sdkGlobalLogger, type Logger as SdkLogger } from "matrix-js-sdk/lib/logger.js";
import type { Logger } from "../../process/log.ts";
import type { CryptoStoreFile } from "./crypto-store.ts";
import { acceptOwnerVerification } from "./verification.ts";

/** What `hearth status` says of the device's trust, refreshed when the crypto reports changes. */
const trust = new WeakMap<MatrixClient, string>();
/** A verification under way: its emojis, shown instead of the trust until it ends. */
const verifying = new WeakMap<MatrixClient, string>();

/**
 * Starts the Rust crypto on the store kept in the home; "on" or why it is off (the channel then
 * answers in unencrypted rooms only). The owner's emoji verification is accepted (verification.ts);
 * `changed` is called when what `cryptoSummary` says changes.
 */
export async function startCrypto(client: MatrixClient, store: CryptoStoreFile, ownerIds: readonly string[], log: Logger, changed: () => void): Promise<string> {
  try {
    await client.initRustCrypto({ useIndexedDB: true, cryptoDatabasePrefix: store.prefix });
    await store.flush();
  } catch (error) {
    log.error("matrix.crypto_failed", { error });
    return `off (the crypto did not start: ${(error as Error).message})`;
  }
  const refresh = () => void refreshTrust(client, ownerIds).then(changed, () => {});
  client.on(CryptoEvent.DevicesUpdated, refresh);
  client.on(CryptoEvent.UserTrustStatusChanged, refresh);
  client.on(CryptoEvent.KeysChanged, refresh);
  const show = (shown: string | undefined) => {
    if (shown === undefined) verifying.delete(client);
    else verifying.set(client, shown);
    changed();
  };
  acceptOwnerVerification(client, ownerIds, log, show, refresh);
  await refreshTrust(client, ownerIds).catch(() => {});
  return "on";
}

async function refreshTrust(client: MatrixClient, ownerIds: readonly string[]): Promise<void> {
  const crypto = client.getCrypto();
  const deviceId = client.getDeviceId();
  if (!crypto || !deviceId) return;
  const keys = await crypto.getOwnDeviceKeys();
  const key = keys.ed25519.replace(/(.{4})/g, "$1 ").trim();
  // The bot has no cross-signing identity of its own: what it can say is whether an emoji
  // verification with one of the owner's devices completed (the bot then trusts that device, as
  // its store remembers; the owner's client trusts the bot's).
  const verifiedWith: string[] = [];
  const devices = await crypto.getUserDeviceInfo([...ownerIds]);
  for (const [userId, byId] of devices) {
    for (const id of byId.keys()) if ((await crypto.getDeviceVerificationStatus(userId, id))?.localVerified) verifiedWith.push(`${userId} (device ${id})`);
  }
  const state = verifiedWith.length ? `verified by emoji with ${verifiedWith.join(", ")}` : "not verified yet: verify it by emoji from your client, or compare its key";
  trust.set(client, `device ${deviceId}, key ${key} (${state})`);
}

/** One part of the status line: "end-to-end encryption on · device ABC (…) not verified yet". */
export function cryptoSummary(client: MatrixClient, encryption: string): string {
  if (encryption !== "on") return `end-to-end encryption ${encryption}`;
  return `end-to-end encryption on · ${verifying.get(client) ?? trust.get(client) ?? `device ${client.getDeviceId()}`}`;
}

/**
 * The SDK's logger: its chatter dropped, its problems in Hearth's log. Parts of the SDK log
 * through its global logger rather than the client's; that one is kept to errors, on stderr.
 */
export function quietLogger(log: Logger): SdkLogger {
  (sdkGlobalLogger as unknown as { setLevel?(level: string): void }).setLevel?.("error");
  const text = (msg: unknown[]) => msg.map((m) => (m instanceof Error ? m.message : typeof m === "string" ? m : JSON.stringify(m))).join(" ").slice(0, 500);
  const make = (): SdkLogger => ({
    trace: () => {},
    debug: () => {},
    info: () => {},
    warn: (...msg: unknown[]) => log.debug("matrix.sdk_warning", { message: text(msg) }),
    error: (...msg: unknown[]) => log.warn("matrix.sdk_error", { message: text(msg) }),
    getChild: () => make(),
  });
  return make();
}
