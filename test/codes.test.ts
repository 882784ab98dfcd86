// data/codes.json is the one table of codes: each error condition has its own code.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect, test } from "vitest";

const file = JSON.parse(readFileSync(resolve(import.meta.dirname, "..", "data", "codes.json"), "utf8")) as {
  results: Record<string, { code: string; text: string; http?: number }>;
};

test("every refusal has a code of its own (only success texts may share 0000)", () => {
  const byCode = new Map<string, string[]>();
  for (const [key, entry] of Object.entries(file.results)) byCode.set(entry.code, [...(byCode.get(entry.code) ?? []), key]);
  const shared = [...byCode.entries()].filter(([code, keys]) => keys.length > 1 && code !== "0000");
  expect(shared).toEqual([]);
});

test("codes have the documented form and request refusals an HTTP status", () => {
  for (const [key, entry] of Object.entries(file.results)) {
    expect(entry.code, key).toMatch(/^(0000|[PRDCIEF]\d{4})$/);
    expect(entry.text.length, key).toBeGreaterThan(3);
    if (entry.code.startsWith("I")) expect(entry.http, key).toBeGreaterThanOrEqual(400);
  }
});
