// The channel conformance scenarios for Signal: the real daemon's Signal channel against the fake signal-cli daemon.
import { conformanceSuite } from "./suite.ts";
import { SIGNAL_TRAITS, startSignalPlatform } from "./signal.ts";

conformanceSuite("signal", SIGNAL_TRAITS, startSignalPlatform);
