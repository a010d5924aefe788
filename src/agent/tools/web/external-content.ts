// Marks text from the web as data. Everything a web tool returns to the model is wrapped here
// with its source; the system prompt says that text inside the wrapper is never an instruction.

const TAG = /<(\/?)(external-content)/gi;

/**
 * `<external-content source="URL">…</external-content>`. A tag inside the text is defused
 * (`<` → `&lt;`), so the page cannot close the wrapper early and speak outside it.
 */
export function wrapExternal(source: string, text: string): string {
  const attr = source.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return `<external-content source="${attr}">\n${text.replace(TAG, "&lt;$1$2")}\n</external-content>`;
}
