// The Rust crypto's store, kept in the home. The crypto keeps its state (the device's identity
// keys, its Olm sessions with other devices, the room keys it received and the ones it sends
// with) in IndexedDB, which Node does not have: fake-indexeddb gives the process one in memory,
// and this file copies its databases to `<home>/secrets.matrix-crypto.json` and back.
//
// - At start, before the crypto opens its store, the file's databases are put back.
// - Every change the crypto makes (a read-write transaction completed) schedules a write within
//   SAVE_DELAY_MS, and `flush()` writes at once (when anything changed): the sync store calls it
//   before it keeps a sync position (sync-store.ts), so every room key the homeserver delivered is
//   on disk before the position that would skip its delivery is; the channel calls it after each
//   event it sends, so a message counts as sent only once the session state that encrypted it
//   (its ratchet index) is on disk. `close()` writes the last state at stop.
// - The file is replaced atomically (mode 600). It holds the device's private keys: its name makes
//   backups count it as a secret (backup/snapshot.ts SECRETS_FILE), like `.env`.
//
// One process may run several Matrix channels (tests do): each open store gets its own database
// prefix, which `initRustCrypto({ cryptoDatabasePrefix })` is given, and drops its databases at close.
import { existsSync, readFileSync } from "node:fs";
import * as fake from "fake-indexeddb";
import type { Logger } from "../../process/log.ts";
import { writeFileAtomic } from "../../state/storage.ts";

type Database = InstanceType<typeof fake.IDBDatabase>;
type Transaction = InstanceType<typeof fake.IDBTransaction>;
type Request = InstanceType<typeof fake.IDBRequest>;

export const CRYPTO_STORE_FILE = "secrets.matrix-crypto.json";
/** How long after a change the store is written (a burst of changes is written once). */
export const SAVE_DELAY_MS = 100;
const FORMAT = 1;

/** The IndexedDB globals the crypto's WebAssembly looks up (`indexedDB`, `IDBKeyRange`, the classes it checks with instanceof). */
const GLOBALS: Record<string, unknown> = {
  indexedDB: fake.indexedDB,
  IDBCursor: fake.IDBCursor,
  IDBCursorWithValue: fake.IDBCursorWithValue,
  IDBDatabase: fake.IDBDatabase,
  IDBFactory: fake.IDBFactory,
  IDBIndex: fake.IDBIndex,
  IDBKeyRange: fake.IDBKeyRange,
  IDBObjectStore: fake.IDBObjectStore,
  IDBOpenDBRequest: fake.IDBOpenDBRequest,
  IDBRequest: fake.IDBRequest,
  IDBTransaction: fake.IDBTransaction,
  IDBVersionChangeEvent: fake.IDBVersionChangeEvent,
};

interface SavedIndex {
  name: string;
  keyPath: string | string[];
  unique: boolean;
  multiEntry: boolean;
}
interface SavedStore {
  name: string;
  keyPath: string | string[] | null;
  autoIncrement: boolean;
  indexes: SavedIndex[];
  /** [key, value] pairs in key order, each in the tagged form of `encode`. */
  records: Array<[unknown, unknown]>;
}
interface SavedDatabase {
  /** The name after the prefix ("matrix-sdk-crypto", "matrix-sdk-crypto-meta"). */
  name: string;
  version: number;
  stores: SavedStore[];
}

/** The open stores by database prefix, told of their databases' changes. */
const open = new Map<string, CryptoStoreFile>();
let serial = 0;
let installed = false;

/** Makes fake-indexeddb the process's IndexedDB (unless it has one) and hooks read-write transactions. */
function install(): void {
  if (installed) return;
  installed = true;
  const g = globalThis as Record<string, unknown>;
  if (g.indexedDB === undefined) for (const [name, value] of Object.entries(GLOBALS)) g[name] = value;
  const proto = fake.IDBDatabase.prototype as unknown as { transaction: (...args: unknown[]) => Transaction };
  const transaction = proto.transaction;
  proto.transaction = function (this: Database, ...args: unknown[]) {
    const tx = transaction.apply(this, args);
    if (args[1] === "readwrite") {
      const owner = open.get(this.name.slice(0, this.name.indexOf("::")));
      if (owner) tx.addEventListener("complete", () => owner.changed());
    }
    return tx;
  };
}

export class CryptoStoreFile {
  /** The database prefix to give `initRustCrypto` as `cryptoDatabasePrefix`. */
  readonly prefix: string;
  readonly #file: string;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | undefined;
  #saving: Promise<void> = Promise.resolve();
  #closed = false;
  /** Changed since the last write began (the first write always happens: opening made the databases). */
  #dirty = true;

  private constructor(file: string, log: Logger) {
    this.prefix = `hearth-matrix-${process.pid}-${++serial}`;
    this.#file = file;
    this.#log = log;
  }

  /** The store of `file`, its databases put back into IndexedDB (none yet when there is no file). */
  static async open(file: string, log: Logger): Promise<CryptoStoreFile> {
    install();
    if ((globalThis as Record<string, unknown>).indexedDB !== fake.indexedDB) throw new Error("the process has an IndexedDB of its own, which this store cannot copy to its file");
    const store = new CryptoStoreFile(file, log);
    if (existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, "utf8")) as { format?: number; databases?: SavedDatabase[] };
      if (saved.format !== FORMAT || !Array.isArray(saved.databases)) throw new Error(`${file} is not a crypto store this version of Hearth reads`);
      for (const db of saved.databases) await importDatabase(`${store.prefix}::${db.name}`, db);
    }
    open.set(store.prefix, store);
    return store;
  }

  /** A read-write transaction of this store completed: written within SAVE_DELAY_MS. */
  changed(): void {
    this.#dirty = true;
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, SAVE_DELAY_MS);
    this.#timer.unref();
  }

  /** Writes the store now (after a write under way); a failure is logged, the next change tries again. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#saving = this.#saving.then(() => this.#save());
    return this.#saving;
  }

  /** Writes the last state and drops the databases from memory. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    open.delete(this.prefix);
    // Called after the client stopped, which closed the crypto and its connections: the deletion waits for those.
    for (const name of await databaseNames(this.prefix)) void request(fake.indexedDB.deleteDatabase(name)).catch(() => {});
  }

  async #save(): Promise<void> {
    if (this.#closed || !this.#dirty) return;
    this.#dirty = false;
    try {
      const databases: SavedDatabase[] = [];
      for (const name of await databaseNames(this.prefix)) databases.push(await exportDatabase(name, name.slice(this.prefix.length + 2)));
      writeFileAtomic(this.#file, JSON.stringify({ format: FORMAT, databases }), 0o600);
    } catch (error) {
      this.#dirty = true;
      this.#log.warn("matrix.crypto_store_not_saved", { file: this.#file, error });
    }
  }
}

function request<T>(r: Request): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result as T);
    r.onerror = () => reject(r.error ?? new Error("IndexedDB request failed"));
  });
}

function done(tx: Transaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error ?? new Error("IndexedDB transaction failed"));
    tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
  });
}

async function databaseNames(prefix: string): Promise<string[]> {
  const all = await fake.indexedDB.databases();
  return all.map((d: { name?: string }) => d.name ?? "").filter((n: string) => n.startsWith(`${prefix}::`)).sort();
}

/** One database's schema and records, read in one transaction (a consistent state). */
async function exportDatabase(fullName: string, name: string): Promise<SavedDatabase> {
  const db = await request<Database>(fake.indexedDB.open(fullName));
  try {
    const names = [...db.objectStoreNames];
    const saved: SavedDatabase = { name, version: db.version, stores: [] };
    if (names.length === 0) return saved;
    const tx = db.transaction(names, "readonly");
    const reads = names.map(async (storeName) => {
      const s = tx.objectStore(storeName);
      const [keys, values] = await Promise.all([request<unknown[]>(s.getAllKeys()), request<unknown[]>(s.getAll())]);
      const indexes = [...s.indexNames].map((i) => {
        const index = s.index(i);
        return { name: i, keyPath: index.keyPath, unique: index.unique, multiEntry: index.multiEntry };
      });
      return { name: storeName, keyPath: s.keyPath, autoIncrement: s.autoIncrement, indexes, records: keys.map((k, i) => [encode(k), encode(values[i])] as [unknown, unknown]) };
    });
    saved.stores = await Promise.all(reads);
    await done(tx);
    return saved;
  } finally {
    db.close();
  }
}

/** Makes the database `fullName` as it was saved: at its version, so the crypto finds it current and migrates nothing. */
async function importDatabase(fullName: string, saved: SavedDatabase): Promise<void> {
  const req = fake.indexedDB.open(fullName, saved.version);
  req.onupgradeneeded = () => {
    const db = req.result;
    for (const s of saved.stores) {
      const store = db.createObjectStore(s.name, { keyPath: s.keyPath, autoIncrement: s.autoIncrement });
      for (const i of s.indexes) store.createIndex(i.name, i.keyPath, { unique: i.unique, multiEntry: i.multiEntry });
    }
  };
  const db = await request<Database>(req);
  try {
    const names = saved.stores.map((s) => s.name);
    if (names.length === 0) return;
    const tx = db.transaction(names, "readwrite");
    for (const s of saved.stores) {
      const store = tx.objectStore(s.name);
      for (const [key, value] of s.records) {
        if (s.keyPath === null) store.put(decode(value), decode(key) as never);
        else store.put(decode(value));
      }
    }
    await done(tx);
  } finally {
    db.close();
  }
}

// IndexedDB holds structured-clone values; JSON holds fewer. Bytes, dates, maps, sets and the
// numbers JSON lacks are written as {"\u0000": kind, "v": …}; a plain object that itself has a
// "\u0000" key is wrapped as kind "object".
const TAG = "\u0000";

export function encode(value: unknown): unknown {
  if (value === undefined) return { [TAG]: "undefined" };
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0) ? value : { [TAG]: "number", v: Object.is(value, -0) ? "-0" : String(value) };
  if (typeof value === "bigint") return { [TAG]: "bigint", v: value.toString() };
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(encode);
  if (value instanceof ArrayBuffer) return { [TAG]: "ArrayBuffer", v: Buffer.from(value).toString("base64") };
  if (ArrayBuffer.isView(value)) return { [TAG]: value.constructor.name, v: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  if (value instanceof Date) return { [TAG]: "Date", v: value.getTime() };
  if (value instanceof Map) return { [TAG]: "Map", v: [...value].map(([k, v]) => [encode(k), encode(v)]) };
  if (value instanceof Set) return { [TAG]: "Set", v: [...value].map(encode) };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = encode(v);
  return TAG in out ? { [TAG]: "object", v: out } : out;
}

const VIEWS: Record<string, new (b: ArrayBuffer) => ArrayBufferView> = { Uint8Array, Int8Array, Uint8ClampedArray, Uint16Array, Int16Array, Uint32Array, Int32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array, DataView };

export function decode(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(decode);
  const o = value as Record<string, unknown>;
  if (!(TAG in o)) return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, decode(v)]));
  const kind = o[TAG] as string;
  const v = o.v;
  if (kind === "undefined") return undefined;
  if (kind === "number") return Number(v);
  if (kind === "bigint") return BigInt(v as string);
  if (kind === "Date") return new Date(v as number);
  if (kind === "Map") return new Map((v as Array<[unknown, unknown]>).map(([k, x]) => [decode(k), decode(x)]));
  if (kind === "Set") return new Set((v as unknown[]).map(decode));
  if (kind === "object") return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, decode(x)]));
  const bytes = Buffer.from(v as string, "base64");
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  if (kind === "ArrayBuffer") return buffer;
  const View = VIEWS[kind];
  if (!View) throw new Error(`unknown value kind in the crypto store: ${kind}`);
  return new View(buffer);
}
