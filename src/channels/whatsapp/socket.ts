// The narrow interface Hearth uses from a WhatsApp client library. WhatsApp cannot be faked at
// the network edge (its protocol is end-to-end encrypted with keys only the linked devices
// hold), so this is where the tests' fake sits: everything above it — normalising messages,
// choices, delivery, reconnecting with backoff, the credential store — is Hearth's code and is
// tested through it; everything below it (baileys.ts, on @whiskeysockets/baileys) is the library.

/** Something the connection reports. One connection reports `open` at most once and `close` once, last. */
export type WhatsAppEvent =
  | { type: "pairing"; how: "qr"; qr: string }
  | { type: "pairing"; how: "code"; code: string }
  | { type: "open"; me: { number: string; name?: string } }
  | { type: "close"; reason: WhatsAppCloseReason; detail: string }
  | { type: "message"; message: WhatsAppMessage };

/**
 * Why a connection closed: `logged_out` — the device was removed (on the phone, or by WhatsApp)
 * and only a new link helps; `replaced` — another client took over the session; `restart` — the
 * library asks for a new connection (after linking); `lost` — anything else, worth retrying.
 */
export type WhatsAppCloseReason = "logged_out" | "replaced" | "restart" | "lost";

/** A message as the library delivered it, in Hearth's terms. */
export interface WhatsAppMessage {
  /** WhatsApp's message id (unique per chat). */
  id: string;
  /** The chat: a person's JID (`4915…@s.whatsapp.net`) or a group's (`…@g.us`). */
  chatJid: string;
  /** The author's phone number (digits, no +) when WhatsApp reveals it, else their JID. */
  sender: string;
  senderName: string;
  /** Sent by the linked account itself (from the phone, or "Message yourself"). */
  fromMe: boolean;
  /** Milliseconds. */
  timestamp: number;
  text: string;
  /** Numbers (digits) mentioned in the text. */
  mentioned: string[];
  /** The message it replies to. */
  quoted?: { id: string; sender?: string; text?: string };
  media?: WhatsAppMedia;
  /** Content Hearth cannot read (a sticker, a location, a contact, a poll). */
  unsupported?: "sticker" | "location" | "contact" | "poll" | "other";
  groupSubject?: string;
}

export interface WhatsAppMedia {
  kind: "image" | "document" | "audio" | "video";
  mime: string;
  fileName?: string;
  size?: number;
  seconds?: number;
  /** A voice note (push-to-talk), not an audio file. */
  voice: boolean;
  /** Downloads it; rejects with `tooLarge: true` once more than `maxBytes` would be read. */
  download(maxBytes: number, signal: AbortSignal): Promise<Uint8Array>;
}

/** What is sent: text, or a file (a photo, a document, audio; `voice`: a voice note, OGG/Opus). */
export type WhatsAppOutgoing =
  | { kind: "text"; text: string }
  | { kind: "file"; data: Uint8Array; name: string; mime: string; asPhoto: boolean; voice: boolean; caption?: string };

/** A connection, open or opening. */
export interface WhatsAppSocket {
  /**
   * Sends to `jid`, quoting `quote` (a message of the chat) when given; resolves with the new
   * message's id. `id`: the id to give it (chosen by Hearth from a stable key): a message sent
   * twice with one id is one message to the recipient.
   */
  send(jid: string, what: WhatsAppOutgoing, quote?: { id: string; sender: string; fromMe: boolean }, id?: string): Promise<string>;
  /** Shows "typing…" (`composing`) or stops it (`paused`) in a chat. */
  presence(jid: string, state: "composing" | "paused"): Promise<void>;
  /** Closes the connection; it reports no more events. Safe to call twice. */
  end(): void;
}

/** The link's secrets as the library keeps them; opaque to Hearth but for their persistence. */
export interface WhatsAppAuthStore {
  /** The stored credentials, or null before the first link. */
  readCreds(): unknown | null;
  writeCreds(creds: unknown): void;
  /** The library's keys of one type by id (absent ids are left out). */
  readKeys(type: string, ids: string[]): Record<string, unknown>;
  /** Sets keys (null removes one). Written to disk before it returns. */
  writeKeys(data: Record<string, Record<string, unknown | null>>): void;
  /** Forgets everything (after a logout: the next start links anew). */
  clear(): void;
}

/**
 * Opens one connection with the credentials in `store` and reports to `on` (which must not
 * throw). `pairingNumber`: ask for an 8-character pairing code for this number (digits) instead
 * of a QR code when not linked yet. Rejects only when the library cannot be loaded or started.
 */
export type WhatsAppConnector = (o: { store: WhatsAppAuthStore; on: (e: WhatsAppEvent) => void; pairingNumber: string | null }) => Promise<WhatsAppSocket>;
