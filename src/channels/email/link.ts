// `hearth setup` for email: which provider (or which hosts), Hearth's mailbox and its (app)
// password, checked (check.ts: IMAP login and IDLE, SMTP login; a failure is one sentence and the
// questions come again), then the owner and their server found by the code mail (handshake.ts).
// The answers become `channels.email` (no password: it goes to the home's .env as
// EMAIL_PASSWORD). Loaded only by setup, after the mail libraries are there.
import type { LinkUi } from "../descriptor.ts";
import { newOwnerCode } from "../owner-code.ts";
import { checkAccounts, type AccountsCheck } from "./check.ts";
import { findOwnerByMail, type MailHandshake, type MailHandshakeOptions } from "./handshake.ts";
import { PROVIDER_IDS, PROVIDERS, type MailServer, type ProviderId } from "./presets.ts";
import { EMAIL_ADDRESS, serversOf, type Account } from "./servers.ts";

export const FOLDER = "INBOX";

/** Where Hearth's mailbox is: a provider's preset, or the hosts of both servers. */
export type MailPlace = { provider: ProviderId } | { provider: null; imap: MailServer; smtp: MailServer };

/** "host:port" read as a server (TLS from the first byte on 993 and 465, else STARTTLS); null when it does not read. */
export function serverOf(text: string): MailServer | null {
  const m = /^\[?([^\s\]]+?)\]?:(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65_535) return null;
  return { host: m[1]!, port, secure: port === 993 || port === 465 };
}

export const isAddress = (text: string): boolean => EMAIL_ADDRESS.test(text.trim().toLowerCase());

export function accountsOf(place: MailPlace, address: string): { imap: Account; smtp: Account } {
  return serversOf(place.provider ? { provider: place.provider, address, imap: {}, smtp: {} } : { provider: null, address, imap: place.imap, smtp: place.smtp });
}

/** What a failed check tells the owner: one sentence, never the password. */
export function checkProblem(r: Extract<AccountsCheck, { ok: false }>): string {
  switch (r.side) {
    case "imap":
      return `${r.problem}; check the address, the servers and the password (most providers want an app password here)`;
    case "idle":
      return `${r.problem}, which Hearth watches the mailbox with; use another IMAP server`;
    case "smtp":
      return `${r.problem}; check the SMTP server (the password was accepted over IMAP)`;
  }
}

/** What the wizard tells the owner to send. */
export const codeRequest = (address: string, code: string) =>
  `Send a mail with the code ${code} in the subject to ${address} from your own address now; only a mail with this code names the owner`;

/** The keys of `channels.email` the answers set. */
export function sectionOf(place: MailPlace, address: string, owner: { address: string; authservId: string }): Record<string, unknown> {
  const hosts = place.provider ? { provider: place.provider } : { provider: null, imap: { ...place.imap, folder: FOLDER }, smtp: place.smtp };
  return { ...hosts, address: address.toLowerCase(), authservId: owner.authservId, ownerAddresses: [owner.address] };
}

export { checkAccounts, findOwnerByMail, type MailHandshake, type MailHandshakeOptions };

/** The interactive wizard's part (descriptor.linkSetup.run). */
/** `waitMs`: how long the owner has to send the code mail (setup's --handshake-timeout). */
export async function linkEmail(ui: LinkUi, waitMs: number): Promise<{ ok: true; section: Record<string, unknown>; secrets: Record<string, string>; linked: string } | { ok: false; problem: string }> {
  let address = "";
  let imapText = "";
  let smtpText = "";
  for (;;) {
    const choice = await ui.choose("Where is Hearth's mailbox?", [
      ...PROVIDER_IDS.map((id) => ({ value: id as ProviderId | "other", label: PROVIDERS[id].name })),
      { value: "other" as const, label: "Another provider (give its IMAP and SMTP servers)" },
    ]);
    let place: MailPlace;
    if (choice === "other") {
      const imap = serverOf((imapText = await askUntil(ui, "IMAP server (host:port, e.g. imap.example.org:993)", imapText, (t) => serverOf(t) !== null, "write it as host:port")));
      const smtp = serverOf((smtpText = await askUntil(ui, "SMTP server (host:port, e.g. smtp.example.org:465)", smtpText, (t) => serverOf(t) !== null, "write it as host:port")));
      place = { provider: null, imap: imap!, smtp: smtp! };
    } else {
      place = { provider: choice };
      ui.say(`${PROVIDERS[choice].name} ${PROVIDERS[choice].note}.`);
    }
    address = (await askUntil(ui, "Hearth's mailbox address (best a mailbox of its own: it reads every mail there)", address, isAddress, "that is not an email address")).toLowerCase();
    const password = await ui.ask(`The (app) password of ${address}`, { secret: true });
    const accounts = accountsOf(place, address);
    const checked = await checkAccounts(accounts, password, FOLDER);
    if (!checked.ok) {
      ui.say(`✗ ${checkProblem(checked)}.`);
      continue;
    }
    ui.say(`✓ ${checked.detail}`);
    const code = newOwnerCode();
    const found = await findOwnerByMail(accounts.imap, password, {
      code,
      folder: FOLDER,
      waitMs,
      ready: () => ui.say(`${codeRequest(address, code)} (waiting up to 10 minutes).`),
      accept: async (o) =>
        (await ui.choose(`A mail with the code from ${o.name} <${o.address}>, vouched for by ${o.authservId} (${o.by}). Is this you, and is ${o.authservId} your mail server?`, [
          { value: "yes", label: "Yes" },
          { value: "no", label: "No: wait for another mail" },
        ])) === "yes",
      ignored: (from) => ui.say(`Ignored a mail without the code from ${from}.`),
    });
    switch (found.kind) {
      case "owner":
        return {
          ok: true,
          section: sectionOf(place, address, found.owner),
          secrets: { EMAIL_PASSWORD: password },
          linked: `Email: Hearth reads ${address}; the owner is ${found.owner.address}, vouched for by ${found.owner.authservId}`,
        };
      case "timeout":
        return { ok: false, problem: `no mail with the code reached ${address} in time; run setup again` };
      case "failed":
        return { ok: false, problem: found.problem };
    }
  }
}

async function askUntil(ui: LinkUi, message: string, initial: string, valid: (t: string) => boolean, why: string): Promise<string> {
  for (;;) {
    const answer = await ui.ask(message, initial ? { initialValue: initial } : {});
    if (valid(answer)) return answer;
    ui.say(`✗ ${why}.`);
  }
}
