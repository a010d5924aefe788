// MCP results as the model gets them: text, images as image blocks, embedded resources, errors.
import { describe, expect, it } from "vitest";
import { toToolOutput } from "../../../src/agent/mcp/results.ts";

describe("toToolOutput", () => {
  it("maps every content type, in order, to text and image blocks", () => {
    expect(
      toToolOutput({
        content: [
          { type: "text", text: "first" },
          { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
          { type: "image", mimeType: "image/tiff", data: "AAAA" },
          { type: "resource", resource: { uri: "file:///notes.md", mimeType: "text/markdown", text: "# Notes" } },
          { type: "resource", resource: { uri: "file:///a.bin", mimeType: "application/octet-stream", blob: "AAAAAAAA" } },
          { type: "resource_link", uri: "file:///b.txt", name: "b" },
          { type: "audio", mimeType: "audio/wav", data: "AAAA" },
        ],
      }),
    ).toEqual({
      content: [
        "first",
        "[an image of type image/tiff was left out: only PNG, JPEG, GIF and WebP can be shown]",
        "[resource file:///notes.md]\n# Notes",
        "[resource file:///a.bin (application/octet-stream, 6 bytes) is binary and was left out]",
        '[resource link file:///b.txt "b"]',
        "[audio (audio/wav) was left out: it cannot be shown]",
      ].join("\n"),
      images: [{ type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }],
    });
  });

  it("keeps a server's error flag, and shows structured content when there is no content", () => {
    expect(toToolOutput({ content: [{ type: "text", text: "no such file" }], isError: true })).toEqual({ content: "no such file", isError: true });
    expect(toToolOutput({ content: [], structuredContent: { temperature: 21 } })).toEqual({ content: '{"temperature":21}' });
  });
});
