// Who vouches for a mail's sender: the Authentication-Results header (RFC 8601) the owner's own
// receiving server adds. Anyone can write any From: line, and anyone can put an
// Authentication-Results header in the mail they send; only the one the receiving server added
// on top, under its own name (the authserv-id), says what that server checked. So: the topmost
// header whose authserv-id is the configured one decides, every header below it is ignored,
// and a header that does not read is no vouching at all (fail closed).

/** One `method=result` of a header, with its properties (`header.d`, `smtp.mailfrom`). */
export interface MethodResult {
  method: string;
  result: string;
  props: Record<string, string>;
}

export interface AuthenticationResults {
  authservId: string;
  results: MethodResult[];
}

/** Drops RFC 5322 comments (nested parentheses), keeping quoted strings whole. Null when a comment or quote never ends. */
function withoutComments(value: string): string | null {
  let out = "";
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === "\\" && (quoted || depth > 0)) {
      if (depth === 0) out += c + (value[i + 1] ?? "");
      i++;
      continue;
    }
    if (quoted) {
      out += c;
      if (c === '"') quoted = false;
    } else if (depth > 0) {
      if (c === "(") depth++;
      else if (c === ")") depth--;
    } else if (c === "(") {
      depth = 1;
      out += " ";
    } else {
      if (c === '"') quoted = true;
      out += c;
    }
  }
  return depth === 0 && !quoted ? out : null;
}

/** Splits at `sep` outside quoted strings. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && quoted) {
      current += c + (text[i + 1] ?? "");
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === sep && !quoted) {
      parts.push(current);
      current = "";
    } else current += c;
  }
  parts.push(current);
  return parts;
}

const unquote = (v: string) => (v.startsWith('"') && v.endsWith('"') && v.length >= 2 ? v.slice(1, -1).replace(/\\(.)/g, "$1") : v);
const TOKEN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** One header's value, read; null when it does not follow the grammar. */
export function parseAuthenticationResults(value: string): AuthenticationResults | null {
  const text = withoutComments(value.replace(/\r?\n[ \t]+/g, " "));
  if (text === null) return null;
  const [head, ...rest] = splitOutsideQuotes(text, ";").map((s) => s.trim());
  // authserv-id [version]
  const idWords = (head ?? "").split(/\s+/).filter(Boolean);
  const authservId = unquote(idWords[0] ?? "");
  if (!authservId || idWords.length > 2 || (idWords[1] !== undefined && !/^\d+$/.test(idWords[1]))) return null;
  const results: MethodResult[] = [];
  for (const segment of rest) {
    if (segment === "") continue;
    if (segment.toLowerCase() === "none") continue;
    // `a = b` is allowed (CFWS around "="): read it as `a=b`.
    const words = splitOutsideQuotes(segment.replace(/\s*=\s*/g, "="), " ").filter(Boolean);
    const first = /^([A-Za-z0-9_-]+)(?:\/\d+)?=([A-Za-z0-9_-]+)$/.exec(words[0] ?? "");
    if (!first) return null;
    const props: Record<string, string> = {};
    for (const word of words.slice(1)) {
      const eq = word.indexOf("=");
      if (eq <= 0) return null;
      const key = word.slice(0, eq).toLowerCase();
      if (!TOKEN.test(key)) return null;
      props[key] = unquote(word.slice(eq + 1));
    }
    results.push({ method: first[1]!.toLowerCase(), result: first[2]!.toLowerCase(), props });
  }
  return { authservId, results };
}

const domainOf = (addressOrDomain: string): string => addressOrDomain.slice(addressOrDomain.lastIndexOf("@") + 1).toLowerCase();

/**
 * Whether the server named `authservId` vouched for mail from `address`: its topmost
 * Authentication-Results header (of `headers`, top first, as they stand in the mail) says DKIM
 * passed with a signature by the address's domain (`header.d`), or SPF passed for a sender of
 * that domain.
 * Headers of other servers are not read; headers below the first of this server are not read.
 */
export function vouchedFor(headers: readonly string[], authservId: string | null, address: string): { ok: true; by: string } | { ok: false; why: string } {
  if (!authservId) return { ok: false, why: "no authservId is configured" };
  const domain = domainOf(address);
  for (const raw of headers) {
    const parsed = parseAuthenticationResults(raw);
    // A header that does not read cannot be told apart from one of ours: nothing below it is trusted either.
    if (!parsed) return { ok: false, why: "an Authentication-Results header does not read" };
    if (parsed.authservId.toLowerCase() !== authservId.toLowerCase()) continue;
    for (const r of parsed.results) {
      if (r.result !== "pass") continue;
      // The domain that signed is `header.d`; `header.i` (the signer's agent or user) is a
      // claim inside the signature, which a verifier need not check against `d`, so it never
      // vouches on its own.
      if (r.method === "dkim" && r.props["header.d"]?.toLowerCase() === domain) return { ok: true, by: `dkim=pass for ${domain}` };
      if (r.method === "spf") {
        const from = r.props["smtp.mailfrom"];
        if (from && domainOf(from) === domain) return { ok: true, by: `spf=pass for ${domain}` };
      }
    }
    return { ok: false, why: `${authservId} did not see DKIM or SPF pass for ${domain}` };
  }
  return { ok: false, why: `no Authentication-Results header from ${authservId}` };
}
