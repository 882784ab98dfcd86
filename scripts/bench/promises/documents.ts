// docs/security.md: a recorded document is read by a scanner linear in its size, whatever it holds.
// 125,000 and 500,000 repetitions of an unclosed form with an unclosed quote: the figure is how many
// times longer four times the text takes (4 when linear, 16 when quadratic; the fastest of three each).
import { readTree } from "../../../src/proof/documents.js";
import { timed, type SpeedPromise } from "../promise.js";

const fastestOf3 = async (text: string) =>
  Math.min(
    ...[await timed(async () => readTree("html", text)), await timed(async () => readTree("html", text)), await timed(async () => readTree("html", text))],
  );

export const documents: SpeedPromise = {
  name: "documents",
  doc: "docs/security.md",
  promise: "reading a recorded document is linear in its size: four times the text takes about four times as long (under 8×; quadratic would be 16×)",
  bound: 8,
  async measure() {
    const small = "<form><input name=a value='".repeat(125_000);
    const large = small.repeat(4);
    readTree("html", small); // warm up
    const [s, l] = [await fastestOf3(small), await fastestOf3(large)];
    return {
      value: l / s,
      unit: "×",
      note: `${s.toFixed(0)} ms for ${(small.length / 1e6).toFixed(1)} MB, ${l.toFixed(0)} ms for ${(large.length / 1e6).toFixed(1)} MB`,
    };
  },
};
