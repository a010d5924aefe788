// The manifest of a backup archive: the first entry, `manifest.json`, naming every file the
// archive holds under `home/` with its size and sha256. `verify` and `restore` trust nothing in an
// archive that this list does not name.
import { z } from "zod";

export const MANIFEST_NAME = "manifest.json";
/** Every file of the home sits under this folder in the archive. */
export const HOME_PREFIX = "home/";

const relPath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith("/") && !p.split("/").some((part) => part === "" || part === "." || part === ".."), "must be a plain relative path");

const fileSchema = z.object({ path: relPath, size: z.int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/u), redacted: z.array(z.string()).optional() });
const leftSchema = z.object({ path: z.string(), reason: z.enum(["rebuilt", "secret", "runtime", "not a regular file", "backups", "unreadable"]) });

export const manifestSchema = z.object({
  format: z.literal("hearth-backup"),
  version: z.literal(1),
  createdAt: z.string(),
  hearth: z.string(),
  files: z.array(fileSchema),
  left: z.array(leftSchema),
});

/**
 * Checks a parsed manifest in bounded memory: the lists one entry at a time, stopping at the first
 * that is wrong (zod would make an issue for each of millions of bad entries at once). The first
 * problem's message, or the manifest.
 */
export function checkManifest(raw: unknown): { ok: true; manifest: Manifest } | { ok: false; message: string } {
  const head = manifestSchema.extend({ files: z.array(z.unknown()), left: z.array(z.unknown()) }).safeParse(raw);
  if (!head.success) return { ok: false, message: head.error.issues[0]?.message ?? "invalid" };
  const files: Manifest["files"] = [];
  for (const f of head.data.files) {
    const r = fileSchema.safeParse(f);
    if (!r.success) return { ok: false, message: r.error.issues[0]?.message ?? "invalid" };
    files.push(r.data);
  }
  const left: Manifest["left"] = [];
  for (const l of head.data.left) {
    const r = leftSchema.safeParse(l);
    if (!r.success) return { ok: false, message: r.error.issues[0]?.message ?? "invalid" };
    left.push(r.data);
  }
  return { ok: true, manifest: { ...head.data, files, left } };
}

export type Manifest = z.output<typeof manifestSchema>;
export type ManifestFile = Manifest["files"][number];
