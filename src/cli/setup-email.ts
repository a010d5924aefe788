// `hearth setup --non-interactive --email`: the interactive wizard's email questions
// (channels/email/link.ts) answered by flags and EMAIL_PASSWORD. Where the mailbox is
// (--email-provider, or --email-imap and --email-smtp as host:port) and its address
// (--email-address); both servers checked; then the owner's code mail names the owner and their
// server. Adds channels.email and EMAIL_PASSWORD to the answers, or prints why not.
import { channelDescriptor } from "../channels/registry.ts";
import type { MailPlace } from "../channels/email/link.ts";
import { PROVIDER_IDS, type ProviderId } from "../channels/email/presets.ts";
import type { SetupAnswers } from "../config/setup-config.ts";
import { createLogger } from "../process/log.ts";
import { UsageError } from "./args.ts";
import type { Io } from "./io.ts";

export const EMAIL_OPTIONS = {
  email: { type: "boolean" },
  "email-address": { type: "string" },
  "email-provider": { type: "string" },
  "email-imap": { type: "string" },
  "email-smtp": { type: "string" },
} as const;

/** The parsed command line (EMAIL_OPTIONS among it). */
type Flags = { readonly [name: string]: string | boolean | undefined };

const isProvider = (p: string): p is ProviderId => (PROVIDER_IDS as readonly string[]).includes(p);

/**
 * With --email: checks the accounts, waits up to `handshakeMs` (`waitText` as the owner reads it)
 * for the owner's code mail and adds the section and the password to `answers`. True when done
 * or not asked for; false once the failure is printed (nothing is written then).
 */
export async function connectEmailFromFlags(home: string, flags: Flags, answers: SetupAnswers, io: Io, env: NodeJS.ProcessEnv, handshakeMs: number, waitText: string): Promise<boolean> {
  if (flags.email !== true) return true;
  const say = (line: string) => io.stdout.write(`${line}\n`);
  const fail = (what: string, problem: string) => {
    say(`✗ ${what}: ${problem}\nNothing was written.`);
    return false;
  };
  const password = env.EMAIL_PASSWORD?.trim();
  if (!password) throw new UsageError("--email takes the mailbox's password from EMAIL_PASSWORD, which is not set (passwords never go on the command line, where other users can see them)");
  const address = typeof flags["email-address"] === "string" ? flags["email-address"].trim().toLowerCase() : "";
  const provider = typeof flags["email-provider"] === "string" ? flags["email-provider"].trim().toLowerCase() : "";
  if (provider && !isProvider(provider)) throw new UsageError(`--email-provider is one of ${PROVIDER_IDS.join(", ")}, not "${provider}" (another provider: --email-imap HOST:PORT --email-smtp HOST:PORT)`);
  if (!provider && (typeof flags["email-imap"] !== "string" || typeof flags["email-smtp"] !== "string")) throw new UsageError("--email needs --email-provider NAME, or --email-imap HOST:PORT and --email-smtp HOST:PORT");

  const { ensurePackages } = await import("./setup-steps.ts");
  const libs = await ensurePackages(home, channelDescriptor("email")!, io);
  if (libs) return fail("email", libs);
  const link = await import("../channels/email/link.ts");
  if (!link.isAddress(address)) throw new UsageError("--email needs --email-address: the mailbox Hearth reads (name@example.org)");
  let place: MailPlace;
  if (provider && isProvider(provider)) place = { provider };
  else {
    const imap = link.serverOf(flags["email-imap"] as string);
    const smtp = link.serverOf(flags["email-smtp"] as string);
    if (!imap || !smtp) throw new UsageError("--email-imap and --email-smtp are HOST:PORT (e.g. imap.example.org:993)");
    place = { provider: null, imap, smtp };
  }

  const accounts = link.accountsOf(place, address);
  const checked = await link.checkAccounts(accounts, password, link.FOLDER);
  if (!checked.ok) return fail("email", link.checkProblem(checked));
  say(`✓ email: ${checked.detail}`);

  const log = createLogger({ level: "info", sink: { write: (l) => io.stderr.write(l) } });
  const code = (await import("../channels/owner-code.ts")).newOwnerCode();
  const found = await link.findOwnerByMail(accounts.imap, password, {
    code,
    folder: link.FOLDER,
    waitMs: handshakeMs,
    ready: () => say(`… ${link.codeRequest(address, code)} (waiting up to ${waitText}).`),
    accept: async () => true,
    ignored: (from) => log.warn("setup.owner_code_missing", { channel: "email", user: from }),
  });
  switch (found.kind) {
    case "failed":
      return fail("email owner", found.problem);
    case "timeout":
      return fail("email owner", `no mail with the code reached ${address} in time; run setup again`);
    case "owner":
      say(`✓ email owner: ${found.owner.address}, vouched for by ${found.owner.authservId} (${found.owner.by})`);
      (answers.linked ??= {}).email = link.sectionOf(place, address, found.owner);
      (answers.secrets ??= {}).EMAIL_PASSWORD = password;
      return true;
  }
}
