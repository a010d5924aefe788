// `hearth setup` for Signal: finds the running signal-cli (a `version` call), and links it as a
// device of Hearth's number by QR code when signal-cli runs without an account (its multi-account
// mode offers startLink/finishLink); a daemon already running as one number just names it. Then
// the owner's number. Failures are values with one sentence.
import type { ChannelLinkSetup, LinkUi } from "../descriptor.ts";
import { terminalQr } from "../qr-code.ts";
import { callSignal } from "./rpc.ts";
import { checkSignalDaemon } from "./setup.ts";

const DAEMON = "http://127.0.0.1:8080";
const NUMBER = /^\+[1-9]\d{5,14}$/;

type Result = Awaited<ReturnType<ChannelLinkSetup["run"]>>;

export async function linkSignal(ui: LinkUi, waitMs: number): Promise<Result> {
  const httpUrl = await ui.ask("signal-cli's HTTP address (signal-cli daemon --http …)", { flag: "url", initialValue: DAEMON });
  try {
    new URL(httpUrl);
  } catch {
    return { ok: false, problem: `${httpUrl} is not an address such as ${DAEMON}` };
  }
  const daemon = await checkSignalDaemon(httpUrl);
  if (!daemon.ok) return { ok: false, problem: `${daemon.problem}; start signal-cli as docs/channels/signal.md shows, then try again` };
  ui.say(`✓ ${daemon.detail}`);

  let accounts: string[] | null;
  try {
    accounts = ((await callSignal(httpUrl, "listAccounts")) as Array<{ number?: string }> | null ?? []).flatMap((a) => (typeof a.number === "string" ? [a.number] : []));
  } catch {
    accounts = null; // a daemon started with -a serves that one number and cannot link another
  }
  let account: string;
  if (accounts === null) {
    account = await ui.ask("The number signal-cli runs as (its -a)", { flag: "account", placeholder: "+4915112345678" });
    if (!NUMBER.test(account)) return { ok: false, problem: `${account} is not a number in international form such as +4915112345678` };
  } else {
    const pick = accounts.length === 0 ? "link" : await ui.choose("Which number is Hearth's?", [...accounts.map((a) => ({ value: a, label: a })), { value: "link", label: "Link a new device by QR code" }], { flag: "account" });
    if (pick === "link") {
      const linked = await linkDevice(httpUrl, ui, waitMs);
      if (!linked.ok) return linked;
      account = linked.number;
    } else account = pick;
  }
  const owner = await ui.ask("Your own Signal number (you talk to Hearth from it)", { flag: "owner", placeholder: "+4917698765432" });
  if (!NUMBER.test(owner)) return { ok: false, problem: `${owner} is not a number in international form such as +4917698765432` };
  if (owner === account) return { ok: false, problem: "your own number must differ from Hearth's: Hearth does not read Note to Self (docs/channels/signal.md)" };
  return { ok: true, section: { httpUrl, account, ownerIds: [owner] }, linked: `Signal: Hearth is ${account}; its owner ${owner}` };
}

async function linkDevice(httpUrl: string, ui: LinkUi, waitMs: number): Promise<{ ok: true; number: string } | { ok: false; problem: string }> {
  try {
    const start = (await callSignal(httpUrl, "startLink")) as { deviceLinkUri?: unknown } | null;
    const uri = start?.deviceLinkUri;
    if (typeof uri !== "string") return { ok: false, problem: "signal-cli did not return a link address" };
    ui.say(`On the phone with Hearth's number: Signal → Settings → Linked devices → Link new device, and scan:\n${await terminalQr(uri)}\n(the code's text: ${uri})`);
    const done = (await callSignal(httpUrl, "finishLink", { deviceLinkUri: uri, deviceName: "Hearth" }, { timeoutMs: waitMs })) as { number?: unknown } | null;
    if (typeof done?.number !== "string") return { ok: false, problem: "signal-cli linked the device but did not say its number" };
    ui.say(`✓ linked as a device of ${done.number}`);
    return { ok: true, number: done.number };
  } catch (err) {
    return { ok: false, problem: `the link did not complete: ${err instanceof Error ? err.message : String(err)}` };
  }
}
