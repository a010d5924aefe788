import { describe, expect, it } from "vitest";
import { commandEnv } from "../../../src/agent/tools/exec.ts";

describe("provider keys and commands", () => {
  it("exec commands never get a provider's key variable", () => {
    const env = commandEnv({ PATH: "/bin", OPENAI_API_KEY: "a", OPENROUTER_API_KEY: "b", GROQ_API_KEY: "c", ANTHROPIC_API_KEY: "d" });
    expect(env).toEqual({ PATH: "/bin" });
  });
});
