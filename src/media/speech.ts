// Text → speech through any OpenAI-compatible speech endpoint (`POST <baseUrl>/audio/speech`,
// JSON: model, voice, input, response_format): OpenAI's tts-1 / gpt-4o-mini-tts, and local
// servers that speak the same API (Kokoro-FastAPI, openedai-speech). Failures are values: the
// caller sends the text alone.

export type SpeechFormat = "opus" | "mp3" | "aac" | "flac" | "wav";

export interface SpeechConfig {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  voice: string;
  format: SpeechFormat;
}

export type Speech = { type: "ok"; bytes: Uint8Array; mime: string; ext: string } | { type: "failed"; reason: string };

/** OpenAI's limit on `input`; local servers take at least as much. A longer answer is spoken in parts. */
export const MAX_SPEECH_CHARS = 4096;

/** A synthesis that takes longer than this is given up (the text is already in the chat). */
export const SPEECH_TIMEOUT_MS = 120_000;

const FORMAT: Record<SpeechFormat, { mime: string; ext: string }> = {
  opus: { mime: "audio/ogg", ext: "ogg" },
  mp3: { mime: "audio/mpeg", ext: "mp3" },
  aac: { mime: "audio/aac", ext: "aac" },
  flac: { mime: "audio/flac", ext: "flac" },
  wav: { mime: "audio/wav", ext: "wav" },
};

/** Largest audio accepted from the service for one part (a misbehaving server must not fill memory). */
const MAX_AUDIO_BYTES = 50 * 1024 * 1024;

export async function synthesize(c: SpeechConfig, input: string, timeoutMs = SPEECH_TIMEOUT_MS): Promise<Speech> {
  let res: Response;
  try {
    res = await fetch(`${c.baseUrl}/audio/speech`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(c.apiKey ? { authorization: `Bearer ${c.apiKey}` } : {}) },
      body: JSON.stringify({ model: c.model, voice: c.voice, input, response_format: c.format }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    return { type: "failed", reason: timedOut ? `no answer within ${timeoutMs / 1000} s` : `cannot reach ${c.baseUrl}` };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { type: "failed", reason: `the service answered HTTP ${res.status}` };
  }
  const stated = Number(res.headers.get("content-length") ?? "0");
  if (stated > MAX_AUDIO_BYTES) {
    await res.body?.cancel();
    return { type: "failed", reason: "the audio was too large" };
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await res.arrayBuffer());
  } catch {
    return { type: "failed", reason: "the audio did not arrive whole" };
  }
  if (bytes.length === 0) return { type: "failed", reason: "the service sent no audio" };
  if (bytes.length > MAX_AUDIO_BYTES) return { type: "failed", reason: "the audio was too large" };
  return { type: "ok", bytes, ...FORMAT[c.format] };
}

/**
 * What a listener should hear of a markdown answer: no code fences, emphasis marks, heading or
 * list markers, table pipes, link targets or picture references; a link keeps its words, a code
 * block is dropped (read aloud it is noise), inline code keeps its text.
 */
export function speakableText(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?(?:```|$)/g, " ")
    .replace(/!\[[^\]\n]*\]\([^)\n]*\)/g, " ")
    .replace(/\[([^\]\n]+)\]\([^)\n]*\)/g, "$1")
    .replace(/<\/?[a-z][^>\n]*>/gi, "")
    .replace(/`([^`\n]*)`/g, "$1")
    .replace(/^[ \t]{0,3}#{1,6}[ \t]+/gm, "")
    .replace(/^[ \t]{0,3}>[ \t]?/gm, "")
    .replace(/^[ \t]*(?:[-*+]|\d+[.)])[ \t]+/gm, "")
    .replace(/^[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-*:?)?[ \t]*$/gm, "")
    .replace(/[ \t]*\|[ \t]*/g, ", ")
    .replace(/^[ \t]*(?:[-*_][ \t]*){3,}$/gm, "")
    .replace(/(\*\*|__)(.+?)\1/g, "$2")
    .replace(/(^|[^\w*])[*_]([^*_\n]+)[*_](?=[^\w*]|$)/g, "$1$2")
    .replace(/~~(.+?)~~/g, "$1")
    .replace(/^, |, $/gm, "")
    .replace(/[ \t]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * `text` in parts of at most `max` characters, cut at a paragraph, else a sentence, else a word
 * boundary (a word longer than `max` is cut where it must).
 */
export function speechParts(text: string, max = MAX_SPEECH_CHARS): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    const cut = [window.lastIndexOf("\n\n"), lastSentenceEnd(window), window.lastIndexOf(" ")].find((i) => i > max / 3) ?? max;
    parts.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

function lastSentenceEnd(s: string): number {
  let at = -1;
  for (const m of s.matchAll(/[.!?…](?=\s)/g)) at = m.index + 1;
  return at;
}
