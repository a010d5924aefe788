// Host keys in OpenSSH's known_hosts format: the fingerprint OpenSSH shows, the lookup that
// decides whether a server's key is known, unknown or changed, and the line `trust` appends.
import { createHash, createHmac } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import path from "node:path";

/** A server's public key as it was offered: the wire blob (type name inside) and what we show. */
export interface HostKey {
  /** `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`, … */
  type: string;
  blob: Buffer;
  /** `SHA256:…` exactly as `ssh-keygen -l` prints it. */
  fingerprint: string;
}

export type KeyCheck =
  | { status: "known" }
  | { status: "unknown" }
  | { status: "changed"; known: HostKey[] };

export function hostKeyFromBlob(blob: Buffer): HostKey {
  const length = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
  const type = blob.subarray(4, 4 + length).toString("latin1");
  return { type, blob, fingerprint: fingerprintOf(blob) };
}

export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

/** The name known_hosts uses for a server: `host`, or `[host]:port` off port 22. */
export function knownHostName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** Reads the file; a missing file is an empty list (nothing is known yet). */
export async function readKnownHosts(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw err;
  }
}

/** Every key recorded for `name` (plain or hashed entries; `@cert-authority` and wildcard lines are not used). */
export function keysFor(text: string, name: string): { keys: HostKey[]; revoked: boolean } {
  const keys: HostKey[] = [];
  let revoked = false;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const fields = line.split(/\s+/);
    let marker: string | undefined;
    if (fields[0]?.startsWith("@")) marker = fields.shift();
    const [hosts, , base64] = fields;
    if (!hosts || !base64 || marker === "@cert-authority") continue;
    if (!hosts.split(",").some((pattern) => hostMatches(pattern, name))) continue;
    const key = hostKeyFromBlob(Buffer.from(base64, "base64"));
    if (marker === "@revoked") revoked = true;
    else keys.push(key);
  }
  return { keys, revoked };
}

function hostMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith("|1|")) {
    const [, , salt, hash] = pattern.split("|");
    if (!salt || !hash) return false;
    return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
  }
  return pattern === name;
}

export function checkHostKey(text: string, name: string, offered: HostKey): KeyCheck {
  const { keys, revoked } = keysFor(text, name);
  if (revoked) return { status: "changed", known: keys };
  if (keys.some((k) => k.blob.equals(offered.blob))) return { status: "known" };
  return keys.length === 0 ? { status: "unknown" } : { status: "changed", known: keys };
}

/** Appends one `name type base64` line, creating the file (0600) and its folder when missing. */
export async function recordHostKey(file: string, name: string, key: HostKey): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const existing = await readKnownHosts(file);
  const sep = existing === "" || existing.endsWith("\n") ? "" : "\n";
  await appendFile(file, `${sep}${name} ${key.type} ${key.blob.toString("base64")}\n`, { mode: 0o600 });
}

/** The key algorithms to ask the server for, so it offers the kind of key we already know. */
export function preferredAlgorithms(known: HostKey[]): string[] {
  const out: string[] = [];
  for (const key of known) {
    const names = key.type === "ssh-rsa" ? ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] : [key.type];
    for (const n of names) if (!out.includes(n)) out.push(n);
  }
  return out;
}
