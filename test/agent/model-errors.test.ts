// What a chat is told when the model fails: the owner gets the detail and the fix, a shared chat
// (a group, a paired person) never sees configuration keys, environment variables, file names or
// the API's address.
import { describe, expect, it } from "vitest";
import { displayUrl, modelErrorNotice, type ModelError, type ModelErrorKind } from "../../src/agent/model-errors.ts";

const KINDS: ModelErrorKind[] = [
  "auth", "billing", "rate_limited", "overloaded", "server", "connection", "stalled",
  "context_overflow", "not_found", "bad_request", "aborted", "unknown",
];

const detailed = (kind: ModelErrorKind): ModelError => ({
  kind,
  model: "claude-x",
  message: `detail for ${kind}: check ANTHROPIC_API_KEY, model.name in /home/ann/.hearth/config.json, http://10.0.0.5:8080`,
});

describe("modelErrorNotice", () => {
  it.each(KINDS)("tells a shared chat about %s without configuration, keys, files or addresses", (kind) => {
    const notice = modelErrorNotice(detailed(kind), "shared");
    expect(notice).not.toMatch(/config|key|ANTHROPIC|\.json|http|10\.0\.0\.5|model\.name|detail/i);
    expect(notice.length).toBeGreaterThan(5);
  });

  it("gives the owner the detail; 'try again' only where waiting can help", () => {
    const auth: ModelError = { kind: "auth", model: "m", status: 401, message: "The model API rejected the API key (HTTP 401). Set a valid key in ANTHROPIC_API_KEY (in Hearth's .env, or the environment), then restart Hearth." };
    expect(modelErrorNotice(auth, "main")).toBe(auth.message);
    const stalled: ModelError = { kind: "stalled", model: "m", message: "The model stopped responding: nothing arrived for 60 s, on 2 tries." };
    expect(modelErrorNotice(stalled, "main")).toBe("The model stopped responding: nothing arrived for 60 s, on 2 tries. Please try again in a moment.");
  });

  it("says in a shared chat that the model stopped responding, and that a rejected key is the owner's problem", () => {
    expect(modelErrorNotice(detailed("stalled"), "shared")).toBe("Sorry, the AI model stopped responding. Please try again in a moment.");
    expect(modelErrorNotice(detailed("auth"), "shared")).toBe(
      "Sorry, I can't answer right now because of a problem on my side. My owner can see what went wrong in Hearth's log.",
    );
  });
});

describe("displayUrl", () => {
  it("drops credentials, query and a trailing slash, and survives garbage", () => {
    expect(displayUrl("https://user:secret@proxy.example:8443/anthropic/?token=abc")).toBe("https://proxy.example:8443/anthropic");
    expect(displayUrl("https://api.anthropic.com")).toBe("https://api.anthropic.com");
    expect(displayUrl("not a url")).toBe("(an invalid address)");
  });
});
