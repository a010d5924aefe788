// The channel conformance scenarios for the terminal: the real daemon and `hearth chat` clients on its socket.
import { conformanceSuite } from "./suite.ts";
import { startTerminalPlatform, TERMINAL_TRAITS } from "./terminal.ts";

conformanceSuite("terminal", TERMINAL_TRAITS, startTerminalPlatform);
