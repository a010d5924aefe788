// Which workspace files a scope may see (DESIGN §4). This is the privacy boundary: context
// loading, memory_get and every memory_search hit go through `canSee`, so a file a scope may
// not see never reaches its model — not in the prompt, not through a tool, not as a snippet.
import path from "node:path";
import type { Scope } from "../agent/messages.ts";

/**
 * Where a run's memory lives: the owner's main memory, or one shared chat's own folder. In a
 * shared chat, `person` is the member addressing Hearth (personSlug of their sender id): their
 * own notes (personNotePath) are part of the scope; every other member's are not.
 */
export type MemoryScope = { kind: "main" } | { kind: "shared"; chat: string; person?: string };

/** Files every scope sees: who the assistant is and how it behaves. */
export const IDENTITY_FILES = ["SOUL.md", "IDENTITY.md", "AGENTS.md"] as const;
/** Files only the main scope sees. */
export const PRIVATE_FILES = ["USER.md", "MEMORY.md", "HEARTBEAT.md"] as const;

export const CHATS_DIR = "memory/chats";
/** A chat's notes about each of its members, one file per sender id: `memory/chats/<chat>/people/<id>.md`. */
export const PEOPLE_DIR = "people";

/**
 * The household's private spaces: `people/<name>/` holds a person's own USER.md, MEMORY.md,
 * HEARTBEAT.md and daily logs (`memory/YYYY-MM-DD.md`), in the shape of the owner's. Not to be
 * confused with a chat's notes about its members (MEMBER_NOTES_DIR, inside a chat's folder).
 */
export const PERSON_SPACES_DIR = "people";
/** What everyone in the household may see: the owner's and every person's runs. */
export const HOUSEHOLD_FILE = "HOUSEHOLD.md";
/** The files of a person's space, relative to it, created when they are added. */
export const PERSON_SPACE_FILES = ["USER.md", "MEMORY.md", "HEARTBEAT.md"] as const;

const PERSON_NAME = /^[a-z](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
export const PERSON_NAME_RULE = 'lowercase letters, digits and "-", starting with a letter and not ending with "-", at most 32 characters (e.g. ana, bob-2)';
/** Whether `name` may name a person: it is then a safe folder name and a session key's last part. */
export const isPersonName = (name: string): boolean => PERSON_NAME.test(name);

/** The folder of person `name`'s space, relative to the workspace: `people/ana`. */
export const personSpaceDir = (name: string): string => `${PERSON_SPACES_DIR}/${name}`;

/** A sender id as a file name: only letters, digits, `_` and `-` survive (ids are digits on Telegram and Discord). */
export const personSlug = (senderId: string): string => senderId.replace(/[^A-Za-z0-9_-]/g, "-") || "someone";

/** The notes about member `person` of shared chat `chat`, relative to the workspace. */
export const personNotePath = (chat: string, person: string): string => `${CHATS_DIR}/${chat}/${PEOPLE_DIR}/${person}.md`;

/**
 * Text the media store keeps (media/store.ts, gateway/media/media-intake.ts): a voice note's
 * transcript (`<audio>.txt`), a PDF's extracted text (`<pdf>.txt`) or a text or markdown file
 * someone sent, directly in the main scope's `media/YYYY-MM/` or a chat's
 * `memory/chats/<slug>/media/`. Such a file is memory like a note: searched, and seen by the
 * same scopes as its folder.
 */
const MEDIA_TEXT = new RegExp(`^(?:media/\\d{4}-\\d{2}|${CHATS_DIR}/[^/]+/media)/[^/]+\\.(?:txt|md)$`);

export const isMediaText = (relPath: string): boolean => MEDIA_TEXT.test(relPath);

/**
 * The folder name of a shared session's memory: `group:telegram:-1001234` → `telegram_-1001234`,
 * `dm:discord:42` → `dm_discord_42`. Only letters, digits, `_` and `-` survive, so a slug can
 * never climb out of memory/chats/.
 */
export function chatSlug(sessionKey: string): string {
  const parts = sessionKey.split(":");
  const kept = parts[0] === "group" ? parts.slice(1) : parts;
  const slug = kept.join("_").replace(/[^A-Za-z0-9_-]/g, "-");
  return slug || "chat";
}

/** `senderId`: the member addressing Hearth in a shared chat, whose own notes the scope includes. */
export function memoryScopeFor(scope: Scope, sessionKey: string, senderId?: string): MemoryScope {
  if (scope === "main") return { kind: "main" };
  return { kind: "shared", chat: chatSlug(sessionKey), ...(senderId !== undefined ? { person: personSlug(senderId) } : {}) };
}

/**
 * Whether a path in shared chat `scope`'s folder is another member's notes (or any member's,
 * when nobody in particular is addressing Hearth): those stay out of the scope.
 */
function isOthersNote(scope: Extract<MemoryScope, { kind: "shared" }>, p: string): boolean {
  if (!p.startsWith(`${CHATS_DIR}/${scope.chat}/${PEOPLE_DIR}/`)) return false;
  return scope.person === undefined || p !== personNotePath(scope.chat, scope.person);
}

/** The folder daily logs of this scope go to, relative to the workspace. */
export function dailyLogDir(scope: MemoryScope): string {
  return scope.kind === "main" ? "memory" : `${CHATS_DIR}/${scope.chat}`;
}

/**
 * May `scope` see the workspace file at `relPath` (forward slashes, relative to the workspace,
 * already normalised and confined to it)?
 * - main: every markdown file in the workspace (the owner may look into any chat's log) and the
 *   text of every stored media file (isMediaText).
 * - shared: the identity files, and markdown files and media text in its own chat folder,
 *   nothing else: never the owner's `media/`, and of the chat's `people/` only the notes about
 *   the member addressing Hearth (`scope.person`).
 */
export function canSee(scope: MemoryScope, relPath: string): boolean {
  const p = path.posix.normalize(relPath);
  if (p.startsWith("../") || p.startsWith("/") || !(p.endsWith(".md") || isMediaText(p))) return false;
  if ((IDENTITY_FILES as readonly string[]).includes(p)) return true;
  if (scope.kind === "main") return true;
  return p.startsWith(`${CHATS_DIR}/${scope.chat}/`) && !isOthersNote(scope, p);
}

/**
 * May a file at `relPath` (normalised, confined to the workspace) be sent into a chat of
 * `scope` (send_file, markdown images)? main: any workspace file; shared: only files in its own
 * chat folder — never the owner's notes or `media/`. How the file must be (plain, one name) is
 * the opener's business (workspace-open.ts, openOutgoingFile).
 */
export function canSend(scope: MemoryScope, relPath: string): boolean {
  const p = path.posix.normalize(relPath);
  if (p.startsWith("../") || p.startsWith("/")) return false;
  return scope.kind === "main" || (p.startsWith(`${CHATS_DIR}/${scope.chat}/`) && !isOthersNote(scope, p));
}
