// The channel conformance scenarios for Telegram: the real daemon polling the Bot API emulator.
import { conformanceSuite } from "./suite.ts";
import { startTelegramPlatform, TELEGRAM_TRAITS } from "./telegram.ts";

conformanceSuite("telegram", TELEGRAM_TRAITS, startTelegramPlatform);
