// Amounts on the wire are decimal strings; inside they are integer cents. toCents reads them
// without building arrays (it runs for every order of a batch): it must read exactly what the
// plain split-based reading did, for any string, well-formed or not.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { formatAmount, fromCents, toCents } from "../src/domain/money.js";
import { isoOf } from "../src/domain/dates.js";

const reference = (amount: string) => {
  const [whole = "0", frac = ""] = amount.split(".");
  return Number(whole) * 100 + Number(frac.padEnd(2, "0").slice(0, 2));
};

describe("amounts", () => {
  test("toCents reads any string as the split-based reading did", () => {
    // then the shape read digit by digit (digits, a dot, two digits), long ones (where doubles round), and that shape with other characters in it
    const amount = fc.oneof(
      fc.stringMatching(/^-?\d{0,13}(\.\d{0,3}){0,2}$/),
      fc.stringMatching(/^\d{1,12}\.\d\d$/),
      fc.bigInt({ min: 10n ** 9n, max: 10n ** 19n }).map((b) => `${b}.42`),
      fc.stringMatching(/^[-+ .e0-9a/:]{1,10}\.[-+ .0-9a/:]{2}$/),
      fc.string({ maxLength: 12 }),
    );
    fc.assert(
      fc.property(amount, (a) => Object.is(toCents(a), reference(a))),
      { numRuns: 5000 },
    );
  });

  test.each([
    ["10", 1000, "10.00"],
    ["10.5", 1050, "10.50"],
    ["0.07", 7, "0.07"],
    ["120.999", 12099, "120.99"],
    [".5", 50, "0.50"],
  ])("%s is %i cents, shown as %s", (amount, cents, shown) => {
    expect(toCents(amount)).toBe(cents);
    expect(formatAmount(amount)).toBe(shown);
    expect(fromCents(cents)).toBe(shown);
  });
});

describe("isoOf", () => {
  test("is toISOString, shared for the same instant and fresh for another one", () => {
    const a = new Date("2026-11-24T10:00:00.000Z");
    expect(isoOf(a)).toBe(a.toISOString());
    expect(isoOf(new Date(a.getTime()))).toBe("2026-11-24T10:00:00.000Z");
    a.setTime(a.getTime() + 1);
    expect(isoOf(a)).toBe("2026-11-24T10:00:00.001Z");
  });
});
