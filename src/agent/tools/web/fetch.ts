// Hearth's own HTTP(S) GET for web_fetch. Redirects are followed by hand (at most 5) so that
// every hop passes the egress policy (`target`), and each connection goes to the address the
// policy checked: node:http's `lookup` is pinned to it, so no second DNS answer is ever used.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Readable } from "node:stream";
import type { ResolvedAddress } from "../../../egress/addresses.ts";

export const MAX_REDIRECTS = 5;

export interface FetchLimits {
  /** The whole fetch, redirects included. */
  timeoutMs: number;
  /** Bytes read (after decompression) before the body is cut. */
  maxBytes: number;
}

export interface FetchOptions extends FetchLimits {
  /**
   * The address to connect to for one hop's URL (http or https), as the egress policy decided
   * it; rejects with FetchRefusedError when the hop may not be made.
   */
  target: (url: URL) => Promise<ResolvedAddress>;
  signal: AbortSignal;
}

/** A fetch target that is not allowed; the message is shown to the model as the tool error. */
export class FetchRefusedError extends Error {
  override name = "FetchRefusedError";
}

/** The host of a URL as the policy compares it (lower case, IPv6 without brackets). */
const hostOf = (url: URL): string => url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");

export interface FetchedBody {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body was longer than maxBytes and was cut there. */
  truncated: boolean;
}

/** A fetch that failed for a reason the model should hear (HTTP status, timeout, too many redirects). */
export class FetchFailedError extends Error {
  override name = "FetchFailedError";
}

/** GETs `url`. Throws FetchRefusedError or FetchFailedError with a message meant for the model. */
export async function fetchUrl(url: string, opts: FetchOptions): Promise<FetchedBody> {
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new FetchFailedError(`Not a valid URL: ${url}`);
  }
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, timeout]);
  try {
    for (let hop = 0; ; hop++) {
      if (current.protocol !== "http:" && current.protocol !== "https:") throw new FetchRefusedError(`Only http and https URLs can be fetched, not ${current.protocol}`);
      const target = await opts.target(current);
      if (signal.aborted) throw signal.reason;
      const res = await request(current, target, signal);
      const location = res.headers.location;
      if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && location) {
        res.resume();
        if (hop >= MAX_REDIRECTS) throw new FetchFailedError(`Too many redirects (more than ${MAX_REDIRECTS}) starting from ${url}.`);
        current = new URL(location, current);
        continue;
      }
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        res.resume();
        throw new FetchFailedError(`${current.href} answered HTTP ${status}${res.statusMessage ? ` ${res.statusMessage}` : ""}.`);
      }
      const { body, truncated } = await readCapped(decoded(res), res, opts.maxBytes, signal);
      return { url: current.href, status, contentType: String(res.headers["content-type"] ?? ""), body, truncated };
    }
  } catch (err) {
    if (err instanceof FetchRefusedError || err instanceof FetchFailedError) throw err;
    if (timeout.aborted) throw new FetchFailedError(`Timed out after ${Math.round(opts.timeoutMs / 1000)} s fetching ${current.href}.`);
    if (opts.signal.aborted) throw new FetchFailedError("The fetch was stopped.");
    throw new FetchFailedError(`Could not fetch ${current.href}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function request(url: URL, target: ResolvedAddress, signal: AbortSignal): Promise<http.IncomingMessage> {
  // The connection may only go to the checked address, whatever the name resolves to now.
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
  const get = url.protocol === "https:" ? https.get : http.get;
  return new Promise((resolve, reject) => {
    const req = get(
      url,
      {
        lookup: pinned,
        signal,
        headers: {
          "user-agent": "Hearth/0.1 (personal assistant; web_fetch)",
          accept: "text/html,application/xhtml+xml,application/pdf,application/json,text/plain;q=0.9,*/*;q=0.5",
          "accept-encoding": "gzip, deflate, br",
        },
        // IP literals skip `lookup`; the guard has already checked them.
        ...(hostOf(url) === target.address ? {} : { servername: hostOf(url) }),
      },
      resolve,
    );
    req.on("error", reject);
  });
}

function decoded(res: http.IncomingMessage): Readable {
  switch (String(res.headers["content-encoding"] ?? "").toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return res.pipe(createGunzip());
    case "deflate":
      return res.pipe(createInflate());
    case "br":
      return res.pipe(createBrotliDecompress());
    default:
      return res;
  }
}

/** Reads at most `max` bytes and then stops reading (the rest is never downloaded in full). */
async function readCapped(stream: Readable, source: Readable, max: number, signal: AbortSignal): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      if (signal.aborted) throw signal.reason;
      const buf = chunk as Buffer;
      if (size + buf.length > max) {
        chunks.push(buf.subarray(0, max - size));
        stream.destroy();
        source.destroy();
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(buf);
      size += buf.length;
    }
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw err;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}
