// When a heartbeat can skip its model call. A tick is skipped only when nothing can have
// changed since the last one that ended in HEARTBEAT_OK: the checklist has no item that depends
// on the time (such an item may come due between two ticks with no file changing), and no
// workspace file changed (a hand edit, a daily-log append after a conversation, a memory note).

/**
 * Words and shapes that make a checklist line time-dependent: a clock time (14:30, 9am), a
 * date (2026-11-23, 23.11., 11/23), a weekday or month name, a relative time word (today,
 * tomorrow, tonight, morning, hour, day, week, month, soon, due, deadline, remind, every,
 * daily, weekly, schedule, appointment, until, before, after), or a cron pattern (five fields of
 * digits, `*`, `/`, `,` and `-`). Erring towards "time-dependent" costs one model call; erring
 * the other way could miss a reminder.
 */
const TIME_PATTERNS: RegExp[] = [
  /\b\d{1,2}[:.h]\d{2}\b/i,
  /\b\d{1,2}\s?(?:am|pm)\b/i,
  /\b\d{4}-\d{2}-\d{2}\b/,
  /\b\d{1,2}[./]\d{1,2}\b/,
  /\b(?:mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?s?\b/i,
  /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)(?:uary|ruary|ch|il|e|y|ust|tember|ober|ember)?\b/i,
  /\b(?:today|tonight|tomorrow|yesterday|morning|afternoon|evening|night|noon|midnight|weekend|now|soon|later)\b/i,
  /\b(?:minutes?|hours?|hourly|days?|daily|weeks?|weekly|months?|monthly|years?|yearly|annual(?:ly)?)\b/i,
  /\b(?:every|each|remind(?:er|ers)?|due|overdue|deadlines?|schedule[ds]?|appointments?|meetings?|until|before|after|when|time|date|calendar|birthdays?|anniversar(?:y|ies))\b/i,
  /(?:^|\s)(?:[\d*/,-]+\s+){4}[\d*/,-]+(?:\s|$)/,
];

/** The first checklist line that depends on the time, or null when none does. Headings count too. */
export function timeDependentLine(checklist: string): string | null {
  for (const line of checklist.split("\n")) {
    const l = line.trim();
    if (l && TIME_PATTERNS.some((re) => re.test(l))) return l;
  }
  return null;
}

export interface SkipFacts {
  /** The checklist (comments removed). */
  checklist: string;
  /** When the last tick that ended in HEARTBEAT_OK started; null when the last tick said something, or none ran yet. */
  lastOkAt: number | null;
  /** When a workspace file last changed; null when unknown (no watcher), which never allows a skip. */
  workspaceChangedAt: number | null;
}

/** True when the tick can be skipped without asking the model (see the file comment). */
export function nothingCanHaveChanged(f: SkipFacts): boolean {
  if (f.lastOkAt === null || f.workspaceChangedAt === null) return false;
  if (timeDependentLine(f.checklist) !== null) return false;
  return f.workspaceChangedAt < f.lastOkAt;
}
