// The channel conformance scenarios for email: the real daemon against a real Dovecot (IMAP) and
// the smtp-server package (SMTP); skipped, with the reason, where Dovecot is not installed.
import { describe, it } from "vitest";
import { mailServersMissing } from "../../support/mail-servers.ts";
import { EMAIL_TRAITS, startEmailPlatform } from "./email.ts";
import { conformanceSuite } from "./suite.ts";

const missing = mailServersMissing();
if (missing) describe("email channel conformance", () => it.skip(`skipped: ${missing}`, () => {}));
else conformanceSuite("email", EMAIL_TRAITS, startEmailPlatform);
