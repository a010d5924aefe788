// The channel conformance scenarios for Slack: the real daemon on @slack/bolt against the fake Slack.
import { SLACK_TRAITS, startSlackPlatform } from "./slack.ts";
import { conformanceSuite } from "./suite.ts";

conformanceSuite("slack", SLACK_TRAITS, startSlackPlatform);
