// Cuts long text to a budget, keeping its head and its tail: a command's first lines say what
// it did, its last lines usually say how it ended.

export const TOOL_RESULT_LIMIT = 30_000;

/** Returns `text` unchanged when it fits, else head + marker + tail within `limit` characters. */
export function truncateMiddle(text: string, limit: number = TOOL_RESULT_LIMIT): string {
  if (text.length <= limit) return text;
  const marker = (n: number) => `\n\n[… ${n.toLocaleString("en-US")} characters cut …]\n\n`;
  const room = limit - marker(text.length).length;
  if (room <= 0) return text.slice(0, limit);
  const head = Math.ceil(room * 0.6);
  const tail = room - head;
  return text.slice(0, head) + marker(text.length - room) + text.slice(text.length - tail);
}
