// The progress lines web tools show while they work ("🔎 searching: …", "🌐 reading: host"),
// the same for the provider's server tools and Hearth's own, so every channel shows one style.

/** The host of a URL for display ("example.com"), or the text itself when it is not a URL. */
export function displayHost(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, "") || url;
  } catch {
    return url;
  }
}

export const searchingLine = (query: string): string => `🔎 searching: ${query}`;
export const readingLine = (url: string): string => `🌐 reading: ${displayHost(url)}`;

/** A server tool call's progress line; an unknown tool shows its name. */
export function serverToolSummary(name: string, input: unknown): string {
  const i = (typeof input === "object" && input !== null ? input : {}) as { query?: unknown; url?: unknown };
  if (name === "web_search" && typeof i.query === "string") return searchingLine(i.query);
  if (name === "web_fetch" && typeof i.url === "string") return readingLine(i.url);
  return name;
}
