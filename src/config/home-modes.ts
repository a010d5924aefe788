// Who else may open the home. The home folder, `.env` and `config.json` hold the keys and tokens
// (and the owner's notes): `hearth start` refuses to run while any of them is open to other users
// (group or others have any permission bit), naming `hearth doctor --fix`, which makes them
// owner-only. OpenSSH refuses a private key others may read for the same reason.
import { lstatSync, statSync } from "node:fs";
import { hearthCmd } from "../process/hearth-command.ts";
import { homePaths } from "./home.ts";

export interface OpenToOthers {
  /** How the owner knows it: "the home folder", ".env", "config.json". */
  label: string;
  path: string;
  /** Its permission bits (of the file a link leads to). */
  mode: number;
  /** The mode `doctor --fix` gives it. */
  private: number;
  /** It is a symbolic link: `doctor --fix` changes no mode through it. */
  link: boolean;
}

/** The home folder, `.env` and `config.json`, those that exist and are open to other users. */
export function openToOthers(home: string): OpenToOthers[] {
  const paths = homePaths(home);
  const out: OpenToOthers[] = [];
  for (const [label, path, mode] of [
    ["the home folder", home, 0o700],
    [".env", paths.secrets, 0o600],
    ["config.json", paths.config, 0o600],
  ] as const) {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st || (st.mode & 0o077) === 0) continue;
    out.push({ label, path, mode: st.mode & 0o777, private: mode, link: lstatSync(path).isSymbolicLink() });
  }
  return out;
}

export const octal = (mode: number): string => mode.toString(8).padStart(3, "0");

/** The home or a secrets file is open to other users: `hearth start` exits 2 with the message. */
export class HomeOpenError extends Error {
  override name = "HomeOpenError";
  readonly open: OpenToOthers[];
  constructor(open: OpenToOthers[]) {
    const list = open.map((o) => `${o.path} (mode ${octal(o.mode)})`);
    const named = list.length === 1 ? `${list[0]} is` : `${list.slice(0, -1).join(", ")} and ${list.at(-1)} are`;
    super(`refusing to start: ${named} open to other users; \`${hearthCmd("doctor --fix")}\` makes ${open.length === 1 ? "it" : "them"} owner-only.`);
    this.open = open;
  }
}

/** Throws HomeOpenError when the home, `.env` or `config.json` is open to other users. */
export function assertHomePrivate(home: string): void {
  const open = openToOthers(home);
  if (open.length > 0) throw new HomeOpenError(open);
}
