// The emoji that stand for a question's choices where a platform answers by reaction (Matrix,
// Signal): the known choices their own sign, any other a keycap digit.

const KNOWN: Record<string, string> = { "Allow once": "✅", "Allow for 30 min": "⏳", Always: "♾️", Deny: "❌", Approve: "✅" };
const DIGITS = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣", "🔟"];

/** The emoji of each choice, in order: the known ones, else a keycap digit; unique within the question. */
export function choiceEmoji(choices: ReadonlyArray<{ id: string; label: string }>): Array<{ id: string; label: string; emoji: string }> {
  const used = new Set<string>();
  return choices.map((c, i) => {
    let emoji = KNOWN[c.label] ?? DIGITS[i] ?? `${i + 1}`;
    if (used.has(emoji)) emoji = DIGITS[i] ?? `${i + 1}`;
    used.add(emoji);
    return { id: c.id, label: c.label, emoji };
  });
}
