// Hearth's markdown as Matrix HTML (`formatted_body`, the subset clients render): code blocks and
// inline code, bold, italics, links, line breaks. Everything else is escaped text; null when the
// text has no markup (the plain body says it all).

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function renderHtml(text: string): string | null {
  if (!/[*_`[]/.test(text)) return null;
  const parts = text.split(/(```[^\n]*\n[\s\S]*?(?:\n```|$))/);
  const html = parts
    .map((part) => {
      const fence = /^```([^\n]*)\n([\s\S]*?)(?:\n```)?$/.exec(part);
      if (part.startsWith("```") && fence) {
        const lang = fence[1]!.trim();
        return `<pre><code${lang ? ` class="language-${escapeHtml(lang)}"` : ""}>${escapeHtml(fence[2]!)}</code></pre>`;
      }
      return inline(part);
    })
    .join("");
  return html;
}

function inline(text: string): string {
  const codes: string[] = [];
  let s = text.replace(/`([^`\n]+)`/g, (_m, code: string) => `\u0000${codes.push(`<code>${escapeHtml(code)}</code>`) - 1}\u0000`);
  s = escapeHtml(s);
  s = s.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_m, label: string, url: string) => `<a href="${url}">${label}</a>`);
  s = s.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>").replace(/(^|[^*\w])\*([^*\n]+)\*(?!\w)/g, "$1<em>$2</em>").replace(/(^|[^\w])_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>");
  s = s.replace(/\n/g, "<br>");
  return s.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => codes[Number(i)]!);
}
