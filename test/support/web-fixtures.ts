// Local stand-ins for the web in tests: an HTTP server on 127.0.0.1 with scripted routes, and a
// tiny PDF written by hand.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export interface LocalWeb {
  /** "http://127.0.0.1:PORT" */
  readonly url: string;
  readonly port: number;
  /** Paths requested, in order. */
  readonly hits: string[];
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startLocalWeb(): Promise<LocalWeb> {
  const routes = new Map<string, Route>();
  const hits: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    hits.push(path);
    const handler = routes.get(path);
    if (handler) handler(req, res);
    else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    route: (path, handler) => void routes.set(path, handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A one-page PDF whose page shows `text` (ASCII, no parentheses or backslashes). */
export function tinyPdf(text: string): Buffer {
  const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

/**
 * A one-page PDF whose page content is one FlateDecode stream that unpacks to `inflated` bytes
 * of zeros (a "PDF bomb": about 1 MB on disk for 1 GB unpacked). Deflated in 1 MB steps, so
 * making it never holds the unpacked bytes.
 */
export async function bombPdf(inflated: number): Promise<Buffer> {
  const { createDeflate } = await import("node:zlib");
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve, reject) => deflate.on("end", resolve).on("error", reject));
  const step = Buffer.alloc(1024 * 1024);
  for (let left = inflated; left > 0; left -= step.length) {
    if (!deflate.write(left >= step.length ? step : step.subarray(0, left))) await new Promise((r) => deflate.once("drain", r));
  }
  deflate.end();
  await done;
  const stream = Buffer.concat(parts);
  const head = [
    "%PDF-1.4\n",
    "1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n",
    "2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n",
    "3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>\nendobj\n",
  ];
  const offsets: number[] = [];
  let out = Buffer.alloc(0);
  for (const h of head) {
    if (out.length > 0) offsets.push(out.length);
    out = Buffer.concat([out, Buffer.from(h, "latin1")]);
  }
  offsets.push(out.length);
  out = Buffer.concat([out, Buffer.from(`4 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`, "latin1"), stream, Buffer.from("\nendstream\nendobj\n", "latin1")]);
  const xref = out.length;
  let tail = `xref\n0 5\n0000000000 65535 f \n`;
  for (const o of offsets) tail += `${String(o).padStart(10, "0")} 00000 n \n`;
  tail += `trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.concat([out, Buffer.from(tail, "latin1")]);
}
