// A QR code for linking a device (Signal, WhatsApp), in the terminal or as an SVG image (the
// dashboard), through the `qrcode` package when it can be loaded; otherwise the text itself with
// the command that draws it.

/** Lines that show `text` as a QR code, or say how to show it. Never throws. */
export async function terminalQr(text: string): Promise<string> {
  try {
    const qrcode = (await import("qrcode")) as unknown as { toString(text: string, o: { type: "terminal"; small: boolean }): Promise<string> };
    return await qrcode.toString(text, { type: "terminal", small: true });
  } catch {
    return `Show this as a QR code with: qrencode -t utf8 '${text}'  (sudo apt install qrencode)`;
  }
}

/** `text` as a QR code in one SVG element; null when the `qrcode` package cannot be loaded. Never throws. */
export async function svgQr(text: string): Promise<string | null> {
  try {
    const qrcode = (await import("qrcode")) as unknown as { toString(text: string, o: { type: "svg"; margin: number }): Promise<string> };
    return (await qrcode.toString(text, { type: "svg", margin: 2 })).replace(/^<\?xml[^>]*>\s*/, "").trim();
  } catch {
    return null;
  }
}
