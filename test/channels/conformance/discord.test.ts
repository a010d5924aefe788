// The channel conformance scenarios for Discord: the real daemon on discord.js against the fake Discord.
import { DISCORD_TRAITS, startDiscordPlatform } from "./discord.ts";
import { conformanceSuite } from "./suite.ts";

conformanceSuite("discord", DISCORD_TRAITS, startDiscordPlatform);
