// The fake WhatsApp library, loaded inside the daemon in place of Baileys (HEARTH_WHATSAPP_SOCKET
// names this file): a WhatsAppConnector (src/channels/whatsapp/socket.ts) that talks to the test's
// fake WhatsApp (fake-whatsapp.ts) over loopback HTTP at FAKE_WHATSAPP_URL. WhatsApp cannot be
// faked at the network edge (end-to-end encrypted with keys only the linked devices hold), so the
// fake sits at Hearth's own interface; the credential store is Hearth's real one, written here as
// the library would write it.
import type { WhatsAppConnector, WhatsAppEvent } from "../../src/channels/whatsapp/socket.ts";

const base = () => {
  const url = process.env.FAKE_WHATSAPP_URL;
  if (!url) throw new Error("FAKE_WHATSAPP_URL is not set");
  return url;
};

async function post(path: string, body: unknown): Promise<any> {
  const res = await fetch(new URL(path, base()), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`the fake WhatsApp answered HTTP ${res.status} to ${path}`);
  return res.json();
}

export const connect: WhatsAppConnector = async ({ store, on, pairingNumber }) => {
  const abort = new AbortController();
  let ended = false;
  const emit = (e: WhatsAppEvent) => {
    if (!ended) on(e);
  };
  const creds = store.readCreds() as { me?: string } | null;
  const query = new URLSearchParams({ linked: creds?.me ?? "", ...(pairingNumber ? { pairingNumber } : {}) });
  void (async () => {
    let reason: Extract<WhatsAppEvent, { type: "close" }>["reason"] = "lost";
    let detail = "the connection ended";
    try {
      const res = await fetch(new URL(`/connect?${query}`, base()), { signal: abort.signal });
      if (res.status !== 200 || !res.body) throw new Error(`HTTP ${res.status}`);
      let buffer = "";
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        buffer += Buffer.from(chunk).toString("utf8");
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (!line.trim()) continue;
          const e = JSON.parse(line) as any;
          if (e.type === "linked") {
            // What the library does once the phone approved the link: the credentials are saved.
            store.writeCreds({ me: e.me, noiseKey: { private: new Uint8Array([1, 2, 3]), public: new Uint8Array([4, 5, 6]) } });
            store.writeKeys({ "pre-key": { "1": { private: new Uint8Array([7]), public: new Uint8Array([8]) } } });
            continue;
          }
          if (e.type === "close") {
            reason = e.reason;
            detail = e.detail;
            break;
          }
          if (e.type === "message" && e.message.media) {
            const { fileId, ...media } = e.message.media;
            e.message.media = {
              ...media,
              download: async (maxBytes: number, signal: AbortSignal) => {
                const r = await fetch(new URL(`/media/${fileId}`, base()), { signal });
                const bytes = new Uint8Array(await r.arrayBuffer());
                if (bytes.byteLength > maxBytes) throw Object.assign(new Error("too large"), { tooLarge: true });
                return bytes;
              },
            };
          }
          emit(e as WhatsAppEvent);
        }
        if (reason !== "lost" || detail !== "the connection ended") break;
      }
    } catch (err) {
      detail = err instanceof Error ? err.message : String(err);
    }
    emit({ type: "close", reason, detail });
    ended = true;
  })();
  return {
    async send(jid, what, quote, id) {
      const body = what.kind === "text" ? what : { ...what, data: Buffer.from(what.data).toString("base64") };
      return String((await post("/send", { jid, what: body, quote: quote ?? null, ...(id ? { id } : {}) })).id);
    },
    async presence(jid, state) {
      await post("/presence", { jid, state });
    },
    end() {
      ended = true;
      abort.abort();
    },
  };
};
