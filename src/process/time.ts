// Wall-clock dates and times in the owner's timezone. One Intl formatter per timezone is kept:
// creating one costs about 0.1 ms and native memory, and Hearth formats a time for every message.

export interface ZonedParts {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  weekday: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone: timezone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short",
      hourCycle: "h23",
    });
    formatters.set(timezone, f);
  }
  return f;
}

export function zonedParts(at: number, timezone: string): ZonedParts {
  const out: Record<string, string> = {};
  for (const p of formatterFor(timezone).formatToParts(at)) out[p.type] = p.value;
  return out as unknown as ZonedParts;
}

/** "2026-11-22": the date at `at` in `timezone`. */
export function localDate(at: number, timezone: string): string {
  const p = zonedParts(at, timezone);
  return `${p.year}-${p.month}-${p.day}`;
}

/** "14:05": the time of day at `at` in `timezone`. */
export function localTime(at: number, timezone: string): string {
  const p = zonedParts(at, timezone);
  return `${p.hour}:${p.minute}`;
}

/** "2026-11-22 14:05 (Sun), Europe/Berlin". */
export function formatLocalTime(at: number, timezone: string): string {
  const p = zonedParts(at, timezone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} (${p.weekday}), ${timezone}`;
}
