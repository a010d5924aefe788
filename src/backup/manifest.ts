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

export const manifestSchema = z.object({
  format: z.literal("hearth-backup"),
  version: z.literal(1),
  createdAt: z.string(),
  hearth: z.string(),
  files: z.array(z.object({ path: relPath, size: z.int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/u), redacted: z.array(z.string()).optional() })),
  left: z.array(z.object({ path: z.string(), reason: z.enum(["rebuilt", "secret", "runtime", "not a regular file", "backups", "unreadable"]) })),
});

export type Manifest = z.output<typeof manifestSchema>;
export type ManifestFile = Manifest["files"][number];
