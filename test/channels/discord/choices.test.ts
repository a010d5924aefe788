// Discord's buttons: at most five to an action row, so a question with more (/model offering
// many models) is split into rows instead of being refused by Discord.
import { describe, expect, it } from "vitest";
import { actionRows } from "../../../src/channels/discord/choices.ts";

const question = (n: number) => ({ key: "k1", kind: "setting" as const, text: "Which model?", choices: Array.from({ length: n }, (_, i) => ({ id: `m${i}`, label: `model-${i}` })) });

describe("Discord action rows", () => {
  it("four choices make one row: the first green, the last red, the others grey", () => {
    expect(actionRows(question(4))).toEqual([
      {
        type: 1,
        components: [
          { type: 2, style: 3, label: "model-0", custom_id: "q:k1:m0" },
          { type: 2, style: 2, label: "model-1", custom_id: "q:k1:m1" },
          { type: 2, style: 2, label: "model-2", custom_id: "q:k1:m2" },
          { type: 2, style: 4, label: "model-3", custom_id: "q:k1:m3" },
        ],
      },
    ]);
  });

  it("seven choices make a row of five and a row of two", () => {
    const rows = actionRows(question(7));
    expect(rows.map((r) => (r.components as Array<{ custom_id: string }>).map((b) => b.custom_id))).toEqual([
      ["q:k1:m0", "q:k1:m1", "q:k1:m2", "q:k1:m3", "q:k1:m4"],
      ["q:k1:m5", "q:k1:m6"],
    ]);
  });
});
