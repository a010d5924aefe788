// Names from outside (a sender's name, a chat's title, a username) are printable text before they
// reach a terminal, a log line, a stored file or the dashboard. A stranger chooses their own
// name: an ESC sequence in it could recolour the owner's terminal, hide the real id behind
// `ESC[8m`, or set the window title (OSC); a bidi override could reorder what follows. Every
// adapter passes the names it reads through `printable`, and so do the setup wizard and the
// pairing store, so one function decides what "printable" means.

/**
 * C0 controls (ESC, BEL, CR, LF, TAB…), DEL, C1 controls (CSI, OSC as single code points), the
 * line and paragraph separators and the bidirectional overrides, embeddings, isolates and marks.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/** What takes an unprintable character's place: visible, and never part of a sequence. */
export const REPLACEMENT = "\ufffd";

/** `text` with every control, escape and direction character replaced by U+FFFD. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, REPLACEMENT);
}
