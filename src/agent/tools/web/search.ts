// Hearth's own web search: one interface, one implementation per search API.

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchProvider {
  /** "brave" or "searxng", for progress lines and errors. */
  readonly name: string;
  /** Returns up to `count` results ([] when none). Throws SearchFailedError with a message for the model. */
  search(query: string, count: number, signal: AbortSignal): Promise<SearchResult[]>;
}

export class SearchFailedError extends Error {
  override name = "SearchFailedError";
}

/** GETs a search API's JSON; failures become SearchFailedError naming the provider, never the key. */
export async function getJson(provider: string, url: URL, headers: Record<string, string>, signal: AbortSignal, timeoutMs: number): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: "application/json", ...headers }, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
  } catch (err) {
    throw new SearchFailedError(`${provider} search could not be reached: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new SearchFailedError(`${provider} search answered HTTP ${res.status}${res.status === 401 || res.status === 403 ? " (check its API key)" : ""}.`);
  }
  try {
    return await res.json();
  } catch {
    throw new SearchFailedError(`${provider} search did not answer with JSON.`);
  }
}

export const str = (v: unknown): string => (typeof v === "string" ? v : "");
/** Search snippets carry HTML emphasis (<strong>); the model wants plain text. */
export const plain = (s: string): string => s.replace(/<[^>]+>/g, "").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
