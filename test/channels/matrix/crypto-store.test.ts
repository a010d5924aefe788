// The Matrix crypto store's file: what IndexedDB held comes back after a write and a new open
// (schema, version, indexes and values JSON has no form for), and a change is written unasked.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CryptoStoreFile, decode, encode } from "../../../src/channels/matrix/crypto-store.ts";
import { createLogger } from "../../../src/process/log.ts";
import { waitFor } from "../../support/daemon.ts";

let dir: string;
const log = createLogger({ level: "error" });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-mcs-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function req<T>(r: { onsuccess: unknown; onerror: unknown; result: unknown; error: unknown }): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result as T);
    r.onerror = () => reject(r.error);
  });
}

const idb = () => (globalThis as unknown as { indexedDB: { open(name: string, version?: number): any } }).indexedDB;

describe("the Matrix crypto store file", () => {
  it("encodes what structured clone keeps and JSON does not", () => {
    const value = { bytes: new Uint8Array([1, 2, 255]), buf: new Uint8Array([9]).buffer, when: new Date(5), m: new Map([["k", [1, undefined]]]), s: new Set([NaN, Infinity]), zero: [-0], big: 12n, "\u0000": "odd key" };
    const back = decode(JSON.parse(JSON.stringify(encode(value)))) as typeof value;
    expect(back).toEqual(value);
    expect(back.bytes).toBeInstanceOf(Uint8Array);
    expect(back.buf).toBeInstanceOf(ArrayBuffer);
    expect(Object.is(back.zero[0], -0)).toBe(true);
  });

  it("puts the databases back as they were written, and writes a change by itself", async () => {
    const file = join(dir, "secrets.matrix-crypto.json");
    const first = await CryptoStoreFile.open(file, log);
    const open = idb().open(`${first.prefix}::matrix-sdk-crypto`, 3);
    open.onupgradeneeded = () => {
      const db = open.result;
      db.createObjectStore("plain");
      db.createObjectStore("inline", { keyPath: ["room", "id"] }).createIndex("byRoom", "room", { unique: false });
    };
    const db = await req<any>(open);
    const tx = db.transaction(["plain", "inline"], "readwrite");
    tx.objectStore("plain").put({ pickle: new Uint8Array([7, 7, 7]) }, ["device", new Uint8Array([1]).buffer]);
    tx.objectStore("inline").put({ room: "!r:x", id: 2, key: "room-key-2" });
    tx.objectStore("inline").put({ room: "!s:x", id: 1, key: "room-key-1" });
    await new Promise((resolve) => (tx.oncomplete = resolve));
    db.close();
    // The completed read-write transaction is written within moments, without a flush.
    await waitFor("the store written", () => {
      try {
        return readFileSync(file, "utf8").includes("room-key-2");
      } catch {
        return false;
      }
    });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await first.close();

    const second = await CryptoStoreFile.open(file, log);
    expect(second.prefix).not.toBe(first.prefix);
    const again = await req<any>(idb().open(`${second.prefix}::matrix-sdk-crypto`));
    expect(again.version).toBe(3);
    const read = again.transaction(["plain", "inline"], "readonly");
    const plain = await req<any>(read.objectStore("plain").get(["device", new Uint8Array([1]).buffer]));
    expect(plain.pickle).toEqual(new Uint8Array([7, 7, 7]));
    const byRoom = await req<any[]>(read.objectStore("inline").index("byRoom").getAll("!s:x"));
    expect(byRoom).toEqual([{ room: "!s:x", id: 1, key: "room-key-1" }]);
    expect(read.objectStore("inline").keyPath).toEqual(["room", "id"]);
    again.close();
    await second.close();
  });

  it("refuses a file it cannot read rather than starting with new keys", async () => {
    const file = join(dir, "secrets.matrix-crypto.json");
    writeFileSync(file, `{"format":99}`);
    await expect(CryptoStoreFile.open(file, log)).rejects.toThrow(/not a crypto store this version of Hearth reads/);
  });
});
