// The dashboard's own style sheet and scripts (static/), read once: nothing comes from a CDN.
import { readFileSync } from "node:fs";

const TYPES: Record<string, string> = { css: "text/css; charset=utf-8", js: "text/javascript; charset=utf-8", svg: "image/svg+xml" };
const cache = new Map<string, { type: string; body: Buffer }>();

/** `style.css`, `app.js`, `favicon.svg`…; null for a name that is not one of them. */
export function staticFile(name: string): { type: string; body: Buffer } | null {
  if (!/^[a-z][a-z0-9-]*\.(css|js|svg)$/.test(name)) return null;
  const hit = cache.get(name);
  if (hit) return hit;
  try {
    const file = { type: TYPES[name.split(".").pop()!]!, body: readFileSync(new URL(`./static/${name}`, import.meta.url)) };
    cache.set(name, file);
    return file;
  } catch {
    return null;
  }
}
