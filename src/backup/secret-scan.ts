// Files the owner placed in the home are judged by what they hold, not by their name: a backup
// made without --include-secrets leaves out anything that looks like a private key (an SSH key
// under ssh/ that tools.exec.hosts names, a TLS key) and anything holding a secret the home's
// configuration knows (a hand copy `config.json.bak`, a note with a pasted token). Names would be
// one short; the bytes are what travels.
import { readFileSync } from "node:fs";
import { parse as parseJsonc } from "jsonc-parser";
import path from "node:path";
import { expandHome, homePaths } from "../config/home.ts";
import { configSchema } from "../config/schema.ts";
import { readSecrets } from "../config/secrets.ts";
import { CREDENTIAL_KEY, isReference, placesOf, secretFields } from "../fields/secret-fields.ts";

/** PEM (`-----BEGIN RSA PRIVATE KEY-----`, `…OPENSSH PRIVATE KEY…`, `…ENCRYPTED PRIVATE KEY…`) and PuTTY's format. */
const PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----|PuTTY-User-Key-File-\d+:/u;
/** Shorter values are words, not keys: searching every file for them would leave out notes by chance. */
const MIN_SECRET_LENGTH = 8;

/**
 * The secret values the home's configuration knows: every value of `.env`, and in config.json
 * every field the schema marks as a secret (of the marked maps, the entries whose key names a
 * credential). Each as bytes, ready to be searched for.
 */
export function knownSecretValues(home: string): Buffer[] {
  const values = new Set<string>(Object.values(readSecrets(home)));
  let raw: unknown;
  try {
    raw = parseJsonc(readFileSync(homePaths(home).config, "utf8"), [], { allowTrailingComma: true });
  } catch {
    raw = undefined;
  }
  for (const field of secretFields(configSchema)) {
    for (const at of placesOf(field, raw)) {
      if (typeof at.value !== "string" || isReference(at.value)) continue;
      if (field.mark.secret === "map" && !CREDENTIAL_KEY.test(at.path.at(-1)!)) continue;
      values.add(at.value.trim());
      values.add(at.value.replace(/^(?:Bearer|Basic)\s+/i, "").trim());
    }
  }
  return [...values].filter((v) => v.length >= MIN_SECRET_LENGTH).map((v) => Buffer.from(v, "utf8"));
}

/**
 * The key files `tools.exec.hosts.*.identityFile` names (`~` expanded, relative to the home),
 * absolute: left out whatever their format, even one this scan would not recognise.
 */
export function identityFiles(home: string): Set<string> {
  const out = new Set<string>();
  try {
    const raw = parseJsonc(readFileSync(homePaths(home).config, "utf8"), [], { allowTrailingComma: true }) as { tools?: { exec?: { hosts?: Record<string, { identityFile?: unknown }> } } };
    for (const host of Object.values(raw?.tools?.exec?.hosts ?? {})) {
      if (typeof host?.identityFile === "string" && host.identityFile.trim()) out.add(path.resolve(home, expandHome(host.identityFile.trim())));
    }
  } catch {
    // No config, or not one that parses: no names to go by; the bytes are still judged.
  }
  return out;
}

/** Whether a file's bytes look like a private key or hold one of `secrets`. */
export function holdsSecret(bytes: Buffer, secrets: readonly Buffer[]): boolean {
  if (PRIVATE_KEY.test(bytes.toString("latin1"))) return true;
  return secrets.some((s) => bytes.includes(s));
}
