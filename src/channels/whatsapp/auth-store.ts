// The WhatsApp link's secrets (the library's credentials and Signal-protocol keys) in one file of
// the home, `secrets.whatsapp.json`, replaced atomically on every change (never the library's
// demo store of many small files, which a crash can leave half-written). Its name makes backups
// count it as a secret (left out unless --include-secrets), like `.env`. Bytes are stored as
// base64 (`{"$bytes": "…"}`) and read back as Buffers, which the library expects.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../state/storage.ts";
import type { WhatsAppAuthStore } from "./socket.ts";

export const AUTH_FILE = "secrets.whatsapp.json";

interface Stored {
  creds: unknown | null;
  keys: Record<string, Record<string, unknown>>;
}

/** The store in `home`; a damaged file is an error that names it, never a silent new link. */
export function openAuthStore(home: string): WhatsAppAuthStore {
  const file = join(home, AUTH_FILE);
  let state: Stored = { creds: null, keys: {} };
  if (existsSync(file)) {
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8"), revive) as Partial<Stored>;
      state = { creds: parsed.creds ?? null, keys: parsed.keys ?? {} };
    } catch (err) {
      throw new Error(`${file} cannot be read (${(err as Error).message}): restore it from a backup made with --include-secrets, or delete it and link WhatsApp again`, { cause: err });
    }
  }
  const save = () => writeFileAtomic(file, JSON.stringify(state, replace), 0o600);
  return {
    readCreds: () => state.creds,
    writeCreds(creds) {
      state.creds = creds;
      save();
    },
    readKeys(type, ids) {
      const of = state.keys[type] ?? {};
      const out: Record<string, unknown> = {};
      for (const id of ids) if (id in of) out[id] = of[id];
      return out;
    },
    writeKeys(data) {
      for (const [type, values] of Object.entries(data)) {
        const of = (state.keys[type] ??= {});
        for (const [id, value] of Object.entries(values)) {
          if (value === null || value === undefined) delete of[id];
          else of[id] = value;
        }
      }
      save();
    },
    clear() {
      state = { creds: null, keys: {} };
      rmSync(file, { force: true });
    },
  };
}

function replace(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  // JSON.stringify has already called Buffer's toJSON by the time the replacer sees it.
  const v = value as { type?: unknown; data?: unknown } | null;
  if (v && typeof v === "object" && v.type === "Buffer" && Array.isArray(v.data)) return { $bytes: Buffer.from(v.data as number[]).toString("base64") };
  return value;
}

function revive(_key: string, value: unknown): unknown {
  const v = value as { $bytes?: unknown } | null;
  if (v && typeof v === "object" && typeof v.$bytes === "string" && Object.keys(v).length === 1) return Buffer.from(v.$bytes, "base64");
  return value;
}
