// `hearth setup` for WhatsApp: links Hearth as a device of its number — by an 8-character pairing
// code typed on the phone, or a QR code scanned — through the same socket interface and
// credential store the channel uses, so the daemon starts linked. Then the owner's number.
// Failures are values with one sentence.
import type { ChannelLinkSetup, LinkUi } from "../descriptor.ts";
import { terminalQr } from "../qr-code.ts";
import { openAuthStore } from "./auth-store.ts";
import { loadConnector } from "./connector.ts";
import type { WhatsAppEvent, WhatsAppSocket } from "./socket.ts";

const NUMBER = /^\+?[1-9]\d{5,14}$/;

type Result = Awaited<ReturnType<ChannelLinkSetup["run"]>>;

export async function linkWhatsApp(ui: LinkUi, home: string, waitMs: number): Promise<Result> {
  ui.say("WhatsApp does not allow unofficial clients and may ban a number that uses one: use a second number for Hearth (docs/channels/whatsapp.md).");
  const how = await ui.choose("How will you link Hearth's WhatsApp?", [
    { value: "code", label: "With a pairing code (typed on the phone with Hearth's number)" },
    { value: "qr", label: "With a QR code (scanned with that phone)" },
  ], { flag: "link", initialValue: "qr" });
  let pairingNumber: string | null = null;
  if (how === "code") {
    const number = await ui.ask("Hearth's WhatsApp number", { flag: "number", placeholder: "+4915112345678" });
    if (!NUMBER.test(number)) return { ok: false, problem: `${number} is not a number in international form such as +4915112345678` };
    pairingNumber = number.replace(/^\+/, "");
  }
  let me: string;
  try {
    me = await link(ui, home, pairingNumber, waitMs);
  } catch (err) {
    return { ok: false, problem: err instanceof Error ? err.message : String(err) };
  }
  ui.say(`✓ linked as a device of +${me}`);
  const owner = await ui.ask("Your own WhatsApp number (you talk to Hearth from it)", { flag: "owner", placeholder: "+4917698765432" });
  if (!NUMBER.test(owner)) return { ok: false, problem: `${owner} is not a number in international form such as +4917698765432` };
  const section = { ...(pairingNumber ? { pairingNumber: `+${pairingNumber}` } : {}), ownerIds: [`+${owner.replace(/^\+/, "")}`] };
  return { ok: true, section, linked: `WhatsApp: Hearth is +${me}; its owner +${owner.replace(/^\+/, "")}` };
}

/** Connects until the link is open (the library asks for one new connection after pairing); resolves with the linked number. */
async function link(ui: LinkUi, home: string, pairingNumber: string | null, waitMs: number): Promise<string> {
  const connect = await loadConnector();
  const store = openAuthStore(home);
  const deadline = Date.now() + waitMs;
  for (;;) {
    let socket: WhatsAppSocket | undefined;
    const outcome = await new Promise<Extract<WhatsAppEvent, { type: "open" | "close" }> | "late">((resolve) => {
      const timer = setTimeout(() => resolve("late"), Math.max(0, deadline - Date.now()));
      const on = (e: WhatsAppEvent) => {
        if (e.type === "pairing") {
          if (e.how === "code") ui.say(`On the phone with Hearth's number: WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, and type ${e.code}`);
          else void terminalQr(e.qr).then((qr) => ui.say(`On the phone with Hearth's number: WhatsApp → Settings → Linked devices → Link a device, and scan:\n${qr}\n(the code's text: ${e.qr})`));
          return;
        }
        if (e.type === "open" || e.type === "close") {
          clearTimeout(timer);
          resolve(e);
        }
      };
      connect({ store, on, pairingNumber }).then(
        (s) => (socket = s),
        (err: unknown) => resolve({ type: "close", reason: "lost", detail: err instanceof Error ? err.message : String(err) }),
      );
    });
    socket?.end();
    if (outcome === "late") throw new Error(`the phone did not approve the link within ${Math.round(waitMs / 1000)} s; run setup again (--handshake-timeout gives it longer)`);
    if (outcome.type === "open") return outcome.me.number;
    switch (outcome.reason) {
      case "restart":
        continue;
      case "logged_out":
        store.clear();
        throw new Error("WhatsApp refused the link (logged out); run setup again");
      case "replaced":
      case "lost":
        throw new Error(`the connection to WhatsApp failed (${outcome.detail}); check the network and run setup again`);
      default:
        outcome.reason satisfies never;
    }
  }
}
