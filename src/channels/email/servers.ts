// Where the mail accounts are: the provider's preset filled in with what the section says.
import { PROVIDERS, type MailServer, type ProviderId } from "./presets.ts";

/** An address as the section and the adapter compare them: lower case, one @, no spaces or brackets. */
export const EMAIL_ADDRESS = /^[^\s@<>()",;]+@[^\s@<>()",;]+\.[^\s@<>()",;]+$/;

interface ServerSection {
  host?: string | undefined;
  port?: number | undefined;
  secure?: boolean | undefined;
  user?: string | undefined;
}

export interface Account extends MailServer {
  user: string;
}

/** The IMAP and SMTP accounts of a section (its provider's hosts unless it names its own). */
export function serversOf(c: { provider: ProviderId | null; address?: string | undefined; imap: ServerSection; smtp: ServerSection }): { imap: Account; smtp: Account } {
  const preset = c.provider ? PROVIDERS[c.provider] : undefined;
  const account = (own: ServerSection, fallback: MailServer | undefined, port: number): Account => {
    const p = own.port ?? fallback?.port ?? port;
    return { host: own.host ?? fallback?.host ?? "", port: p, secure: own.secure ?? fallback?.secure ?? (p === 993 || p === 465), user: own.user ?? c.address ?? "" };
  };
  return { imap: account(c.imap, preset?.imap, 993), smtp: account(c.smtp, preset?.smtp, 465) };
}
