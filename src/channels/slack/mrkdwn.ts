// The model's markdown → Slack's mrkdwn, and → plain text for when Slack will not take the
// formatted one. Slack's dialect differs from markdown in the ways that matter: bold is `*x*`,
// italic `_x_`, strike `~x~`, links `<url|text>`, no headings (shown bold), no language on a
// code fence; and `&`, `<`, `>` must always be escaped, inside code too, or Slack reads them as
// its own markup (a `<!channel>` in an answer would ping everyone).
//
// Conservative like the other renderers: a marker that does not clearly open and close stays
// literal text (snake_case_words, 2*3*4), and code is never reformatted.

/** Slack's three entities; everything else is literal. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(.*)$/;
const QUOTE = /^ {0,3}>[ \t]?(.*)$/;
const LINK = /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+|mailto:[^\s)]+)\)/g;

/** Markdown → mrkdwn (chat.postMessage's `text` with mrkdwn on). */
export function markdownToMrkdwn(md: string): string {
  return convert(md, inlineMrkdwn, (lead, body) => `${lead}${body}`);
}

/** Markdown → plain text without markers (escaped: Slack's entities hold even without mrkdwn). */
export function markdownToPlain(md: string): string {
  return convert(md, (t) => escapeSlack(stripInline(t)), (lead, body) => `${lead}${body}`);
}

function convert(md: string, inline: (text: string) => string, line: (lead: string, body: string) => string): string {
  const out: string[] = [];
  const lines = md.replace(/\r\n?/g, "\n").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const fence = FENCE.exec(l);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !(lines[j]!.trim().startsWith(marker[0]!.repeat(3)) && lines[j]!.trim().replace(/[`~]/g, "") === "")) body.push(lines[j++]!);
      if (j >= lines.length) {
        // Unclosed: the rest is still code (a streamed answer mid-block).
        out.push("```", ...body.map(escapeSlack), "```");
        break;
      }
      out.push("```", ...body.map(escapeSlack), "```");
      i = j;
      continue;
    }
    const heading = HEADING.exec(l);
    if (heading) {
      out.push(`*${stripInline(heading[1]!).replace(/[*]/g, "")}*`.replace(/^\*\*$/, ""));
      continue;
    }
    const quote = QUOTE.exec(l);
    if (quote) {
      out.push(`>${inline(quote[1]!) ? ` ${inline(quote[1]!)}` : ""}`);
      continue;
    }
    const bullet = BULLET.exec(l);
    if (bullet && !/^[-*_][ \t]*[-*_][ \t]*[-*_]/.test(l.trim())) {
      out.push(line(`${bullet[1]}• `, inline(bullet[2]!)));
      continue;
    }
    out.push(line("", inline(l)));
  }
  return out.join("\n");
}

/** One line's inline markdown → mrkdwn; code spans are kept apart from formatting. */
function inlineMrkdwn(text: string): string {
  return mapOutsideCode(text, (t) => {
    let s = escapeSlack(t);
    const links: string[] = [];
    s = s.replace(LINK, (_m, label: string, url: string) => {
      links.push(`<${url.replace(/&amp;/g, "&").replace(/[<>|]/g, encodeURIComponent)}|${label.replace(/[|]/g, "¦")}>`);
      return `\u0000${links.length - 1}\u0000`;
    });
    s = s.replace(/(^|[^\w*])\*\*(?=\S)([^*\n]*?\S)\*\*(?![\w*])/g, "$1\u0001$2\u0001");
    s = s.replace(/(^|[^\w_])__(?=\S)([^_\n]*?\S)__(?![\w_])/g, "$1\u0001$2\u0001");
    s = s.replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, "$1_$2_");
    s = s.replace(/(^|[^\w~])~~(?=\S)([^~\n]*?\S)~~(?![\w~])/g, "$1~$2~");
    s = s.replace(/\u0001/g, "*");
    return s.replace(/\u0000(\d+)\u0000/g, (_m, n: string) => links[Number(n)]!);
  });
}

/** Markers removed, link targets kept after their text. */
function stripInline(text: string): string {
  return text
    .replace(LINK, (_m, label: string, url: string) => (label === url ? url : `${label} (${url})`))
    .replace(/(^|[^\w*])\*\*(?=\S)([^*\n]*?\S)\*\*(?![\w*])/g, "$1$2")
    .replace(/(^|[^\w_])__(?=\S)([^_\n]*?\S)__(?![\w_])/g, "$1$2")
    .replace(/(^|[^\w~])~~(?=\S)([^~\n]*?\S)~~(?![\w~])/g, "$1$2");
}

/** Applies `f` to the text between `code` spans; the spans stay as they are (escaped). */
function mapOutsideCode(text: string, f: (t: string) => string): string {
  const parts = text.split(/(`[^`\n]+`)/);
  return parts.map((p, i) => (i % 2 === 1 ? escapeSlack(p) : f(p))).join("");
}
