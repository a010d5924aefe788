// The hosts and ports of common mail providers, so the owner names a provider instead of looking
// them up. `authservId`: the name the provider's receiving servers put first in the
// Authentication-Results header they add, where it is one fixed name; elsewhere the owner copies
// it from a mail they sent themselves (docs/channels/email.md).

export interface MailServer {
  host: string;
  port: number;
  /** TLS from the first byte (993, 465); false: STARTTLS after connecting (587). */
  secure: boolean;
}

export interface ProviderPreset {
  name: string;
  imap: MailServer;
  smtp: MailServer;
  authservId?: string;
  /** What the owner must do first (an app password, a bridge that runs). */
  note: string;
}

export const PROVIDERS = {
  gmail: {
    name: "Gmail",
    imap: { host: "imap.gmail.com", port: 993, secure: true },
    smtp: { host: "smtp.gmail.com", port: 465, secure: true },
    authservId: "mx.google.com",
    note: "needs 2-step verification and an app password (Google Account → Security → App passwords)",
  },
  fastmail: {
    name: "Fastmail",
    imap: { host: "imap.fastmail.com", port: 993, secure: true },
    smtp: { host: "smtp.fastmail.com", port: 465, secure: true },
    note: "needs an app password (Settings → Privacy & Security → App passwords)",
  },
  outlook: {
    name: "Outlook.com",
    imap: { host: "outlook.office365.com", port: 993, secure: true },
    smtp: { host: "smtp-mail.outlook.com", port: 587, secure: false },
    note: "needs an app password (account.microsoft.com → Security → Advanced security options)",
  },
  icloud: {
    name: "iCloud Mail",
    imap: { host: "imap.mail.me.com", port: 993, secure: true },
    smtp: { host: "smtp.mail.me.com", port: 587, secure: false },
    note: "needs an app-specific password (appleid.apple.com → Sign-In and Security)",
  },
  proton: {
    name: "Proton Mail (through Proton Mail Bridge)",
    imap: { host: "127.0.0.1", port: 1143, secure: false },
    smtp: { host: "127.0.0.1", port: 1025, secure: false },
    note: "needs Proton Mail Bridge running beside Hearth; use the password the Bridge shows, not the account's",
  },
} as const satisfies Record<string, ProviderPreset>;

export type ProviderId = keyof typeof PROVIDERS;
export const PROVIDER_IDS = Object.keys(PROVIDERS) as [ProviderId, ...ProviderId[]];
