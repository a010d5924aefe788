// MCP tool results → Hearth tool output: text as text, images as image blocks, embedded
// resources as their text (or a note for binary ones), errors as `isError` results.
import type { ImageBlock } from "../messages.ts";
import type { ToolOutput } from "../tool.ts";

/** Image types the model accepts. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** Base64 characters of one image at most (about 3.75 MB decoded). */
const MAX_IMAGE_CHARS = 5_000_000;

type Content = { type: string; [key: string]: unknown };

/** Maps a `tools/call` result. `result` is what the SDK returned (content or legacy toolResult). */
export function toToolOutput(result: Record<string, unknown>): ToolOutput {
  const texts: string[] = [];
  const images: ImageBlock[] = [];
  const content = Array.isArray(result.content) ? (result.content as Content[]) : [];
  for (const c of content) {
    switch (c.type) {
      case "text":
        texts.push(String(c.text ?? ""));
        break;
      case "image": {
        const mediaType = String(c.mimeType ?? "");
        const data = String(c.data ?? "");
        if (!IMAGE_TYPES.has(mediaType)) texts.push(`[an image of type ${mediaType || "unknown"} was left out: only PNG, JPEG, GIF and WebP can be shown]`);
        else if (data.length > MAX_IMAGE_CHARS) texts.push(`[an image of ${Math.round((data.length * 3) / 4 / 1024)} KB was left out: too large]`);
        else images.push({ type: "image", mediaType, data });
        break;
      }
      case "audio":
        texts.push(`[audio (${String(c.mimeType ?? "unknown type")}) was left out: it cannot be shown]`);
        break;
      case "resource": {
        const r = (c.resource ?? {}) as Record<string, unknown>;
        if (typeof r.text === "string") texts.push(`[resource ${String(r.uri ?? "")}]\n${r.text}`);
        else texts.push(`[resource ${String(r.uri ?? "")} (${String(r.mimeType ?? "binary")}, ${Math.round((String(r.blob ?? "").length * 3) / 4)} bytes) is binary and was left out]`);
        break;
      }
      case "resource_link":
        texts.push(`[resource link ${String(c.uri ?? "")}${c.name ? ` "${String(c.name)}"` : ""}]`);
        break;
      default:
        texts.push(`[content of type ${JSON.stringify(c.type)} was left out]`);
    }
  }
  if (content.length === 0 && result.structuredContent !== undefined) texts.push(JSON.stringify(result.structuredContent));
  if (content.length === 0 && "toolResult" in result) texts.push(JSON.stringify(result.toolResult));
  const text = texts.join("\n");
  return {
    content: text,
    ...(images.length > 0 ? { images } : {}),
    ...(result.isError === true ? { isError: true } : {}),
  };
}
