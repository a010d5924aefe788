// Fetching updates (long polling) for @grammyjs/runner: the runner asks this supplier for the
// next batch; the supplier owns the offset and what a failure means.
//
// - 401: the token is bad. Thrown as TelegramAuthError; the runner stops and the channel fails.
// - 409: another process polls with the same token (or a webhook is set). Reported, then
//   retried with backoff: the other poller may go away (a deploy overlapping the old process).
// - Network errors and 5xx: retried with backoff, capped, with jitter; never a hot loop.
// - An empty answer that came back long before the long-poll timeout means the server does not
//   long-poll (a Bot API emulator): wait before asking again, `idlePollMs` at first, doubling
//   up to `idlePollMaxMs` while nothing arrives (quick during a conversation, cheap when idle).
import { setTimeout as sleep } from "node:timers/promises";
import type { UpdateSupplier } from "@grammyjs/runner";
import type { Api } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../../process/log.ts";
import type { ChannelStatus } from "../channel.ts";
import { describeError, errorCode, retryAfterSeconds, TelegramAuthError } from "./errors.ts";

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export interface UpdatePollerOptions {
  api: Pick<Api, "getUpdates">;
  /** Seconds one getUpdates call may wait for updates. */
  longPollSeconds: number;
  idlePollMs: number;
  idlePollMaxMs: number;
  backoff: Backoff;
  log: Logger;
  /** Told when polling starts failing, and when it works again. Must not throw. */
  onStatus: (status: ChannelStatus) => void;
  /** Redacted from anything logged. */
  token: string;
  clock?: () => number;
  /** Jitter factor source in [0, 1); default Math.random. */
  random?: () => number;
}

/** The runner's abort signal: a polyfill type (abort-controller), which Node's timers do not take. */
type RunnerSignal = Parameters<UpdateSupplier<Update>["supply"]>[1];

function nativeSignal(signal: RunnerSignal): AbortSignal {
  const controller = new AbortController();
  if (signal.aborted) controller.abort();
  else signal.addEventListener("abort", () => controller.abort(), { once: true });
  return controller.signal;
}

/** Failures logged at warn: the first of a streak and then every tenth (a long outage stays readable). */
const WARN_EVERY = 10;

export class UpdatePoller implements UpdateSupplier<Update> {
  readonly #o: UpdatePollerOptions;
  readonly #clock: () => number;
  readonly #random: () => number;
  /** The first update not handed out yet. */
  #next = 0;
  #failures = 0;
  #idleWaitMs: number;

  constructor(opts: UpdatePollerOptions) {
    this.#o = opts;
    this.#clock = opts.clock ?? Date.now;
    this.#random = opts.random ?? Math.random;
    this.#idleWaitMs = opts.idlePollMs;
  }

  /** Resolves with the next updates (possibly none); rejects on abort or a bad token. */
  supply = async (batchSize: number, signal: RunnerSignal): Promise<Update[]> => {
    const aborted = nativeSignal(signal);
    const { api, longPollSeconds } = this.#o;
    for (;;) {
      const offset = this.#next;
      const startedAt = this.#clock();
      try {
        const updates = await api.getUpdates(
          { offset, limit: Math.max(1, Math.min(batchSize, 100)), timeout: longPollSeconds, allowed_updates: ["message"] },
          signal,
        );
        this.#recovered();
        const last = updates.at(-1);
        if (last) {
          this.#next = last.update_id + 1;
          this.#idleWaitMs = this.#o.idlePollMs;
          return updates;
        }
        if (this.#clock() - startedAt < (longPollSeconds * 1000) / 2) {
          await sleep(this.#idleWaitMs, undefined, { signal: aborted });
          this.#idleWaitMs = Math.min(this.#o.idlePollMaxMs, this.#idleWaitMs * 2);
        }
        return [];
      } catch (err) {
        if (signal.aborted) throw err;
        await this.#failed(err, aborted);
      }
    }
  };

  #recovered(): void {
    if (this.#failures === 0) return;
    this.#o.log.info("telegram.polling_resumed", { afterFailures: this.#failures });
    this.#failures = 0;
    this.#o.onStatus({ state: "running" });
  }

  async #failed(err: unknown, signal: AbortSignal): Promise<void> {
    const code = errorCode(err);
    if (code === 401) throw new TelegramAuthError();
    this.#failures++;
    const delayMs = this.#delay(retryAfterSeconds(err));
    const seconds = Math.max(1, Math.round(delayMs / 1000));
    const error = describeError(err, this.#o.token);
    const detail =
      code === 409
        ? `another process is polling updates for this bot token (409 Conflict: ${error}); stop the other instance — retrying in ${seconds} s`
        : `cannot fetch updates from Telegram (${error}); retrying in ${seconds} s`;
    this.#o.onStatus({ state: "reconnecting", detail });
    const fields = { error, failures: this.#failures, retryInMs: Math.round(delayMs) };
    const event = code === 409 ? "telegram.poll_conflict" : "telegram.poll_failed";
    if (this.#failures === 1 || this.#failures % WARN_EVERY === 0) this.#o.log.warn(event, fields);
    else this.#o.log.debug(event, fields);
    await sleep(delayMs, undefined, { signal });
  }

  /** Exponential backoff with ±20 % jitter, capped; a 429's retry_after wins when longer. */
  #delay(retryAfter: number | undefined): number {
    const { initialMs, maxMs } = this.#o.backoff;
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.#failures - 1, 30));
    const jittered = base * (0.8 + 0.4 * this.#random());
    return Math.max(jittered, (retryAfter ?? 0) * 1000);
  }
}
