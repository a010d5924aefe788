// Voice notes → text through any OpenAI-compatible transcription endpoint
// (`POST <baseUrl>/audio/transcriptions`, multipart: file, model, language): OpenAI, Groq,
// whisper.cpp's server, speaches. Returns failures as values: the caller tells the sender.

export interface TranscriptionConfig {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  language?: string | undefined;
}

/**
 * `seconds`: the audio's length as the service measured it (verbose_json's `duration`, or
 * OpenAI's json `usage: { type: "duration", seconds }`); absent when the service does not say.
 */
export type Transcript = { type: "ok"; text: string; seconds?: number } | { type: "failed"; reason: string };

/** A transcription that takes longer than this is given up (the chat waits for it). */
export const TRANSCRIBE_TIMEOUT_MS = 120_000;

export async function transcribe(c: TranscriptionConfig, audio: { bytes: Uint8Array; name: string; mime: string }, timeoutMs = TRANSCRIBE_TIMEOUT_MS): Promise<Transcript> {
  const form = new FormData();
  form.append("file", new Blob([audio.bytes], { type: audio.mime || "application/octet-stream" }), audio.name);
  form.append("model", c.model);
  form.append("response_format", "json");
  if (c.language) form.append("language", c.language);
  let res: Response;
  try {
    res = await fetch(`${c.baseUrl}/audio/transcriptions`, {
      method: "POST",
      body: form,
      headers: c.apiKey ? { authorization: `Bearer ${c.apiKey}` } : {},
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
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return { type: "failed", reason: "the service's answer was not JSON" };
  }
  const text = typeof body === "object" && body !== null ? (body as { text?: unknown }).text : undefined;
  if (typeof text !== "string") return { type: "failed", reason: "the service's answer had no text" };
  const seconds = measuredSeconds(body as { duration?: unknown; usage?: unknown });
  return { type: "ok", text: text.trim(), ...(seconds !== undefined ? { seconds } : {}) };
}

/** The audio length the service reports, if it reports one that makes sense. */
function measuredSeconds(body: { duration?: unknown; usage?: unknown }): number | undefined {
  const usage = body.usage as { type?: unknown; seconds?: unknown } | null | undefined;
  const reported = typeof usage === "object" && usage !== null && usage.type === "duration" ? usage.seconds : body.duration;
  return typeof reported === "number" && Number.isFinite(reported) && reported >= 0 ? reported : undefined;
}
