// The query language of the memory index: how free text becomes a safe FTS5 match, and the
// scope tokens that put a shared chat's visibility into the match itself.
import { CHATS_DIR, IDENTITY_FILES, PEOPLE_DIR, type MemoryScope } from "../visibility.ts";

const MAX_QUERY_TERMS = 16;

/**
 * The `scope` column holds one token per chunk, so a shared scope's visibility is part of the
 * FTS5 match and a common word does not rank thousands of private chunks only to drop them.
 * Chat folder names are hex-encoded so every slug is a single token.
 */
const IDENTITY_TOKEN = "identityfile";
const PRIVATE_TOKEN = "privatefile";
const chatToken = (chat: string): string => `chat${Buffer.from(chat).toString("hex")}`;
/** A member's notes in a chat (people/<id>.md) are seen only while that member addresses Hearth. */
const personToken = (chat: string, person: string): string => `person${Buffer.from(`${chat}/${person}`).toString("hex")}`;

/** Words of a free-text query, as the unicode61 tokenizer would cut them; stop words go first. */
export function queryTerms(query: string): string[] {
  const words = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? [])];
  const content = words.filter((w) => !STOP_WORDS.has(w));
  return (content.length > 0 ? content : words).slice(0, MAX_QUERY_TERMS);
}

/** A term as an FTS5 string: quoted, so AND, NEAR, `*`, `-` and `(` are just text. */
const quoteTerm = (term: string): string => `"${term.replaceAll('"', '""')}"`;

/** The FTS5 query: the words in heading or text, and for a shared scope its scope tokens. */
export function matchExpression(terms: string[], op: "AND" | "OR", scope: MemoryScope): string {
  const words = `{heading text}: (${terms.map(quoteTerm).join(` ${op} `)})`;
  if (scope.kind === "main") return words;
  const person = scope.person === undefined ? "" : ` OR ${quoteTerm(personToken(scope.chat, scope.person))}`;
  return `${words} AND {scope}: (${quoteTerm(IDENTITY_TOKEN)} OR ${quoteTerm(chatToken(scope.chat))}${person})`;
}

/** The scope token of a file: who besides main may see it (mirrors canSee). */
export function scopeToken(rel: string): string {
  if ((IDENTITY_FILES as readonly string[]).includes(rel)) return IDENTITY_TOKEN;
  const chat = rel.startsWith(`${CHATS_DIR}/`) ? rel.slice(CHATS_DIR.length + 1).split("/") : [];
  if (chat.length === 3 && chat[1] === PEOPLE_DIR && chat[2]!.endsWith(".md")) return personToken(chat[0]!, chat[2]!.slice(0, -".md".length));
  if (chat.length >= 3 && chat[1] === PEOPLE_DIR) return PRIVATE_TOKEN;
  return chat.length >= 2 ? chatToken(chat[0]!) : PRIVATE_TOKEN;
}

const STOP_WORDS = new Set(
  (
    "a about all also an and any are as at be been but by can could did do does for from had has have he her his how i if in into is it its just " +
    "me my of on or our s she so t that the their them then there they this to was we were what when where " +
    "which who why will with would you your"
  ).split(" "),
);
