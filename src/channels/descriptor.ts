// The one seam between Hearth and a chat platform. A platform is a folder, src/channels/<id>/,
// whose descriptor.ts exports one ChannelDescriptor, and one line in registry.ts that lists it.
// Everything else learns the platform from the registry: the configuration's `channels.<id>`
// section (and so `hearth init`'s template, its docs page's settings table and doctor's
// checks), who may talk to Hearth there, the chat ids a job may deliver to, `hearth setup`, the
// status line and the dashboard. The adapter itself (the Channel, channel.ts) is loaded only
// when the channel is configured and has its credentials.
//
// How to add a platform, in short: make the folder; write the adapter (channel.ts's Channel);
// write the descriptor (its config schema from the shared fields in ../fields.ts, its
// capabilities, its credentials, its chat ids, its checks, `create`); add it to registry.ts; give
// its test fake the conformance suite's FakePlatform (test/channels/conformance/) and run the
// suite. Where the platform lacks edits or buttons, the channel-neutral fallbacks
// (fallbacks.ts) stand in, so approvals, pairing, `/model` and budget notices work everywhere.
import type { z } from "zod";
import type { ChannelCapabilities } from "./capabilities.ts";
import type { Channel, MenuCommand } from "./channel.ts";
import type { Logger } from "../process/log.ts";

/** Who may talk to Hearth on a channel, read from its configuration section. */
export interface ChannelAccess {
  /** The owner's ids on the platform: their private chat is the main conversation. */
  ownerIds: string[];
  dmPolicy: "pairing" | "allowlist" | "disabled";
  /** Ids that may write privately without pairing (a shared conversation, never the owner's files). */
  allowFrom: string[];
  /** Group chats: which (ids of the chat or of what holds it, e.g. a Discord server) and whether a mention is needed. */
  groups: { policy: "allowlist" | "open" | "disabled"; allow: string[]; requireMention: boolean; tasks: string[]; rateLimit: { perSender: number; perChat: number; window: string } };
  dmRateLimit: { perSender: number; window: string };
  queueMode: "steer" | "followup" | "collect" | "interrupt" | null;
}

/** One row of the channel page's settings table (docs/channels/<id>.md): `channels.<id>.<key>`, its default, what it does. */
export interface ConfigRow {
  key: string;
  default: string;
  meaning: string;
}

/** A line of `hearth doctor`: a check that passed (`ok`) or a problem and its fix. */
export interface ChannelCheck {
  ok: boolean;
  detail: string;
  fix?: string;
}

/** A secret the channel needs, kept in the home's .env (or the environment), never in config.json unless the owner puts it there. */
export interface ChannelCredential {
  /** The environment variable, e.g. TELEGRAM_BOT_TOKEN. */
  variable: string;
  /** Its key in the channel's section, e.g. "token". */
  key: string;
  /** Where the owner gets it ("from @BotFather"). */
  source: string;
  /** null when `value` has the platform's shape; else what is wrong and the fix. Never echoes the value. */
  shapeProblem?(value: string): { problem: string; fix: string } | null;
}

/** Someone who wrote to the bot during `hearth setup`'s owner handshake. */
export interface SetupSender {
  id: string;
  name: string;
  username?: string | undefined;
}

export type OwnerHandshake = { kind: "owner"; sender: SetupSender } | { kind: "timeout" } | { kind: "failed"; problem: string };

/** How `hearth setup` connects the platform: asks for the credential, checks it, finds the owner. */
export interface ChannelSetup {
  /** "Connect a Telegram bot?", and whether the answer defaults to yes. */
  offer: string;
  offerDefault: boolean;
  /** What the owner does on the platform before there is a credential to give (an app to create), shown before the prompt. */
  steps?: string;
  /** The prompt for the first credential; each further one (a second token) is asked with its variable and `source`. */
  tokenPrompt: string;
  /** What the platform calls a message to the bot alone ("private message", Discord's "direct message"). */
  dm: string;
  /** The bot as the owner looks for it ("@name" on Telegram). */
  botHandle(name: string): string;
  /** The key of the platform's API address in the section ("apiRoot") and its flag ("--telegram-api-root"). */
  apiKey: string;
  apiFlag: string;
  defaultApi: string;
  /**
   * Checks the credential against the platform (one cheap request each); the bot's name, or why
   * not. `more`: the further credentials by variable, for a platform that needs several.
   */
  checkToken(token: string, api: string, more?: Record<string, string>): Promise<{ ok: true; botName: string } | { ok: false; problem: string }>;
  /** What to tell the owner to send, once the bot listens (`code`: the one-time owner code). */
  codeRequest(botName: string, code: string): string;
  /**
   * Waits for a private message carrying `code` from someone `accept` confirms as the owner,
   * greets them with `greeting`, and says who they are. `botName`: as checkToken said; `ready`
   * once the bot listens (ask the owner to write only then), with the name the bot goes by.
   * `waitMs` counts from `ready`; `ignored` hears of every message without the code; `more` as
   * for checkToken.
   */
  findOwner(
    token: string,
    api: string,
    o: { code: string; botName: string; waitMs: number; greeting: string; ready(botName: string): void; accept(s: SetupSender): Promise<boolean>; ignored(s: SetupSender): void; more?: Record<string, string> },
  ): Promise<OwnerHandshake>;
}

/**
 * The terminal, as a link setup (ChannelLinkSetup) talks through it. Each question names its
 * `flag`: `hearth setup --non-interactive` answers it from `--<id>-<flag>` (else `initialValue`)
 * and refuses to start without either.
 */
export interface LinkUi {
  /**
   * Asks a question and resolves with the answer, trimmed; `secret`: typed unseen (a password).
   * `flag`: the question's `--<id>-<flag>` for `--non-interactive` (a link setup with `flags`).
   */
  ask(message: string, opts?: { flag?: string; initialValue?: string; placeholder?: string; secret?: boolean }): Promise<string>;
  /** Picks one of `options` (value and label). */
  choose<T extends string>(message: string, options: Array<{ value: T; label: string }>, opts?: { flag?: string; initialValue?: T }): Promise<T>;
  /** Shows lines to the owner (a QR code's rows and its text, a pairing code, what to do on the phone). */
  say(text: string): void;
}

/**
 * How `hearth setup` connects a platform that links as a device of a phone number (Signal,
 * WhatsApp) rather than taking a bot token: it asks through `ui`, checks, links, and says which
 * keys of `channels.<id>` to write (ownerIds among them).
 */
export interface ChannelLinkSetup {
  offer: string;
  offerDefault: boolean;
  /**
   * The flags of `hearth setup --non-interactive --<id>`: `--<id>-<name> <value>`, one per question
   * `run` asks (`owner` among them). A link setup without them has a non-interactive path of its
   * own (email: cli/setup-email.ts).
   */
  flags?: Array<{ name: string; value: string }>;
  /**
   * Never throws but a UsageError of the non-interactive terminal (a missing flag): a failure is a
   * value with one sentence saying what to do. `home`: where the link's secrets go; `waitMs`: how
   * long the owner has (to approve the link on the phone, to send the code). `secrets`: variables
   * for the home's .env (a password), written with the section once setup ends, never into
   * config.json.
   */
  run(ui: LinkUi, home: string, waitMs: number): Promise<{ ok: true; section: Record<string, unknown>; secrets?: Record<string, string>; linked: string } | { ok: false; problem: string }>;
}

/** What the gateway hands an adapter it creates. */
export interface ChannelDeps {
  log: Logger;
  /** The home folder: where a platform keeps what it must (under `<home>/<id>/` or a file of its own: WhatsApp's link credentials, email's last UID, Matrix's sync position). */
  home: string;
  /**
   * Tells the owner, on another channel, something about this one they must act on (a device
   * logged out): one message to the owner's chat on the first other channel that can take it,
   * else the terminal's mailbox. Fire and forget: it never throws and never waits.
   */
  tellOwner(text: string): void;
  /** The command menus, from the gateway's one command table (platforms that show menus use them). */
  commandMenus: { owner: MenuCommand[]; everyone: MenuCommand[] };
  /** The same table as commands with their one option each (platforms with slash commands). */
  slashCommands: MenuCommand[];
}

/**
 * A chat platform, as Hearth knows it. `C` is the output of its config schema, `Id` its id.
 * Everything but `create` is cheap to import: the adapter and its SDK load on first use.
 */
export interface ChannelDescriptor<C = any, Id extends string = string> {
  /** `channels.<id>` in config.json, the first part of a chat address ("telegram:123"). Lower case. */
  readonly id: Id;
  /** As people know it: "Telegram". */
  readonly name: string;
  readonly capabilities: ChannelCapabilities;
  /**
   * Its section of config.json; absent for a channel that needs none and always runs (the
   * terminal). `template`: the commented block `hearth init` writes (JSONC lines, without the
   * leading `// `); `rows`: the settings table of docs/channels/<id>.md.
   */
  readonly config?: { schema: z.ZodType<C, any>; template: string; rows: ConfigRow[] };
  /**
   * The libraries its adapter needs beyond Hearth's own, at exact versions ("@slack/bolt@5.1.0"),
   * the same as Hearth's devDependencies: installed into the home by setup (packages.ts).
   */
  readonly packages?: string[];
  /** The secrets it needs to start; one missing leaves the channel listed as not running, with the fix. */
  readonly credentials?: ChannelCredential[];
  /** Who may talk to Hearth there. */
  access?(config: C): ChannelAccess;
  /** The config key of its group rules as the owner writes it ("groups", Discord's "guilds"). */
  readonly groupsKey?: string;
  /**
   * Its chat ids: `pattern` checks one named in a job's `deliver` ("telegram:<chatId>");
   * `kind` says whether an id names a person's private chat (Telegram: a user's id), a group, or
   * cannot tell (Discord: a channel id), which decides where Hearth may post unasked.
   */
  readonly chats?: { label: string; pattern: RegExp; kind(chatId: string): "person" | "group" | "unknown" };
  /** How to find one's own user id on the platform ("@userinfobot tells it"), for doctor and the template. */
  readonly ownerIdHint?: string;
  /** The config key of the owner's ids as the owner writes it, when not "ownerIds" (email's "ownerAddresses"). */
  readonly ownerKey?: string;
  /** `hearth doctor`'s offline checks beyond the shared ones (credentials and owner ids). */
  check?(config: C): ChannelCheck[];
  /** `hearth doctor --online`: the credential tried against the platform (one cheap request). */
  checkOnline?(config: C): Promise<ChannelCheck>;
  readonly setup?: ChannelSetup;
  /** `hearth setup` for a platform linked as a device instead of by a token (loads its parts on use). */
  readonly linkSetup?: ChannelLinkSetup;
  /** Loads the adapter (first use only) and makes it. Called only with every credential present. */
  create?(config: C, deps: ChannelDeps): Promise<Channel>;
}
