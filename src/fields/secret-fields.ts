// Which fields of config.json hold secrets, said once, in the schema: a field is marked with zod's
// `.meta(secretValue(…))` or `.meta(secretMap())` where it is declared (config/fields.ts, the MCP
// and provider schemas), and everything that must keep secrets in — backups (blanked), the
// upgrade that moves keys to `.env`, the log redactor, doctor — reads the marks through
// `secretFields`. A new secret field is covered everywhere by its mark; there is no second list
// to forget. Shared by `config/` and `agent/` (whose MCP schema is part of config.json).
import { z } from "zod";

/** A wildcard step of a field's path: every key of a map (`providers.*.apiKey`). */
export const ANY = "*";

/**
 * How a secret leaves config.json for the home's `.env` (config/migrations.ts). `names` are the
 * map keys the path's wildcards stood for (a provider's or an MCP server's name); `holder` is the
 * object that holds the field in the file as written.
 */
export interface SecretMove {
  /** The variable that takes the value. */
  variable(names: string[], holder: Record<string, unknown>): string;
  /**
   * What stays in config.json in its place: nothing (Hearth reads `variable` when the field is
   * absent), the variable's name in a sibling key (`apiKeyEnv`), or a `${VAR}` reference in the
   * field itself (fields that expand variables, such as the MCP servers' auth).
   */
  leaves(names: string[], holder: Record<string, unknown>): { kind: "nothing" } | { kind: "sibling"; key: string } | { kind: "reference" };
}

/** The mark of a field whose value is a secret (a type, not an interface: zod's metadata is an index type). */
export type SecretValueMark = {
  secret: "value";
  move: SecretMove;
};
/**
 * The mark of a map whose values may be secrets (HTTP headers, environment variables): every value
 * is blanked in a backup; the log redactor takes the values whose key names a credential.
 */
export type SecretMapMark = {
  secret: "map";
};
export type SecretMark = SecretValueMark | SecretMapMark;

export const secretValue = (move: SecretMove): SecretValueMark => ({ secret: "value", move });
export const secretMap = (): SecretMapMark => ({ secret: "map" });

/** Hearth reads this variable itself when the field is absent. */
export const toVariable = (name: string): SecretMove => ({ variable: () => name, leaves: () => ({ kind: "nothing" }) });

/** A map key that names a credential (`Authorization`, `x-api-key`, `GITHUB_TOKEN`): its value is registered with the log redactor. */
export const CREDENTIAL_KEY = /auth|key|token|secret|password|credential/i;

/** One marked field: its path from the top of config.json (`*` for any key of a map) and its mark. */
export interface SecretField {
  path: string[];
  mark: SecretMark;
}

const known = new WeakMap<z.ZodType, SecretField[]>();

/** Every marked field of `schema`, in declaration order, each path once. */
export function secretFields(schema: z.ZodType): SecretField[] {
  let fields = known.get(schema);
  if (!fields) known.set(schema, (fields = findSecretFields(schema)));
  return fields;
}

function findSecretFields(schema: z.ZodType): SecretField[] {
  const found = new Map<string, SecretField>();
  const walk = (node: z.ZodType, path: string[], seen: Set<z.ZodType>) => {
    if (seen.has(node)) return;
    const mark = z.globalRegistry.get(node) as { secret?: unknown } | undefined;
    if (mark?.secret === "value" || mark?.secret === "map") {
      const key = path.join(".");
      if (!found.has(key)) found.set(key, { path, mark: mark as SecretMark });
      return;
    }
    const next = new Set(seen).add(node);
    const def = (node as unknown as { _zod: { def: Record<string, any> } })._zod.def;
    switch (def.type) {
      case "object":
        for (const [k, v] of Object.entries(def.shape as Record<string, z.ZodType>)) walk(v, [...path, k], next);
        return;
      case "record":
        walk(def.valueType, [...path, ANY], next);
        return;
      case "array":
        walk(def.element, [...path, ANY], next);
        return;
      case "union":
        for (const o of def.options as z.ZodType[]) walk(o, path, next);
        return;
      case "intersection":
        walk(def.left, path, next);
        walk(def.right, path, next);
        return;
      case "pipe":
        walk(def.in, path, next);
        walk(def.out, path, next);
        return;
      case "lazy":
        walk(def.getter(), path, next);
        return;
      default:
        if (def.innerType) walk(def.innerType, path, next);
    }
  };
  walk(schema, [], new Set());
  return [...found.values()];
}

/** A value that is only a `${VAR}` reference names a secret without holding one. */
export const isReference = (value: string): boolean => /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(value.trim());

/**
 * The places of `field` in a parsed config.json: every concrete path (wildcards expanded against
 * the maps in `raw`) with the names the wildcards stood for and the object holding the field.
 * A map mark yields one place per entry of the map.
 */
export function placesOf(field: SecretField, raw: unknown): { path: string[]; names: string[]; holder: Record<string, unknown>; value: unknown }[] {
  const out: { path: string[]; names: string[]; holder: Record<string, unknown>; value: unknown }[] = [];
  const steps = field.mark.secret === "map" ? [...field.path, ANY] : field.path;
  const go = (node: unknown, i: number, path: string[], names: string[]) => {
    if (!isObject(node)) return;
    const step = steps[i]!;
    const keys = step === ANY ? Object.keys(node) : [step];
    for (const k of keys) {
      if (!(k in node)) continue;
      const at = [...path, k];
      const named = step === ANY ? [...names, k] : names;
      if (i === steps.length - 1) out.push({ path: at, names: named, holder: node, value: node[k] });
      else go(node[k], i + 1, at, named);
    }
  };
  go(raw, 0, [], []);
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
