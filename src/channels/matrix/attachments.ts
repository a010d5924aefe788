// Files in encrypted rooms (the spec's EncryptedFile): AES-256-CTR with a fresh key and IV per
// file, the ciphertext's SHA-256 beside them, so the homeserver stores only ciphertext. The
// receiver checks the hash before it decrypts.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import type { EncryptedFileInfo } from "./inbound.ts";

const b64 = (b: Buffer) => b.toString("base64").replace(/=+$/, "");
const b64url = (b: Buffer) => b.toString("base64url");

export function encryptAttachment(data: Uint8Array): { data: Uint8Array; info: Omit<EncryptedFileInfo, "url"> & { v: string; key: EncryptedFileInfo["key"] & Record<string, unknown> } } {
  const key = randomBytes(32);
  // The spec's IV: 8 random bytes, then a zero counter.
  const iv = Buffer.concat([randomBytes(8), Buffer.alloc(8)]);
  const cipher = createCipheriv("aes-256-ctr", key, iv);
  const out = Buffer.concat([cipher.update(data), cipher.final()]);
  return {
    data: out,
    info: {
      v: "v2",
      key: { kty: "oct", key_ops: ["encrypt", "decrypt"], alg: "A256CTR", k: b64url(key), ext: true },
      iv: b64(iv),
      hashes: { sha256: b64(createHash("sha256").update(out).digest()) },
    },
  };
}

export function decryptAttachment(data: Uint8Array, info: EncryptedFileInfo): Uint8Array {
  const hash = b64(createHash("sha256").update(data).digest());
  if (hash !== info.hashes.sha256.replace(/=+$/, "")) throw new Error("the encrypted file does not match its hash");
  const key = Buffer.from(info.key.k, "base64url");
  const iv = Buffer.from(info.iv, "base64");
  const decipher = createDecipheriv("aes-256-ctr", key, iv);
  return new Uint8Array(Buffer.concat([decipher.update(data), decipher.final()]));
}
