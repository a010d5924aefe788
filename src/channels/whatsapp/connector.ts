// Which WhatsApp library stands behind the socket interface: Baileys (baileys.ts), or the module
// HEARTH_WHATSAPP_SOCKET names (the tests' fake at the interface).
import { pathToFileURL } from "node:url";
import type { WhatsAppConnector } from "./socket.ts";

export const SOCKET_MODULE_ENV = "HEARTH_WHATSAPP_SOCKET";

export async function loadConnector(env: NodeJS.ProcessEnv = process.env): Promise<WhatsAppConnector> {
  const fake = env[SOCKET_MODULE_ENV];
  if (fake) return ((await import(pathToFileURL(fake).href)) as { connect: WhatsAppConnector }).connect;
  return (await import("./baileys.ts")).connectBaileys;
}
