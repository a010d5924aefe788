import { describe, expect, it } from "vitest";
import { carriesOwnerCode, newOwnerCode } from "../../src/channels/owner-code.ts";
import { telegramStartLink } from "../../src/channels/telegram/setup.ts";

describe("the setup's owner code", () => {
  it("is eight characters a person reads without confusing 0/O or 1/I/L, new each time", () => {
    const codes = new Set(Array.from({ length: 50 }, () => newOwnerCode()));
    expect(codes.size).toBe(50);
    for (const c of codes) expect(c).toMatch(/^[A-HJKMNP-Z2-9]{8}$/);
  });

  it("is carried by the code alone or after /start (the deep link), case and spaces forgiven; nothing else counts", () => {
    const code = "K7QX2MPA";
    for (const text of ["K7QX2MPA", "k7qx2mpa", " /start K7QX2MPA ", "/start@TestNameBot K7QX2MPA", "/start\nK7QX2MPA"]) expect(carriesOwnerCode(text, code), text).toBe(true);
    for (const text of [undefined, "", "/start", "/start WRONGC0D", "my code is K7QX2MPA", "K7QX2MPA please", "/startK7QX2MPA", "/stop K7QX2MPA"]) expect(carriesOwnerCode(text, code), String(text)).toBe(false);
  });

  it("opens the bot with the code through Telegram's start link", () => {
    expect(telegramStartLink("TestNameBot", "K7QX2MPA")).toBe("https://t.me/TestNameBot?start=K7QX2MPA");
  });
});
