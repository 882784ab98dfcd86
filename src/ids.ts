// Deterministic ids and generated values. Every value is derived from (seed, kind, counter): the
// same seed and the same sequence of requests give the same ids, and the counters live in the
// store so a restart with --data continues where it stopped instead of repeating ids.
import { createHash } from "node:crypto";
// the English locale alone: importing the package root loads every locale (~150 ms more at start)
import { faker as englishFaker } from "@faker-js/faker/locale/en";
import type { Faker } from "@faker-js/faker";

export type Counters = Record<string, number>;

export interface Ids {
  /** 16 digits, e.g. a transaction id. */
  digits(kind: string, length: number): string;
  /** lowercase hex of the given length, e.g. a token or page id. */
  hex(kind: string, length: number): string;
  /** An integer in [min, max] derived from a stable key (not a counter): same key, same number. */
  intFor(key: string, min: number, max: number): number;
  /** The English faker seeded from a stable key, for plausible names and words: use it at once (it is shared). */
  fakerFor(key: string): Faker;
}

export function createIds(seed: string, counters: Counters): Ids {
  const hash = (text: string) => createHash("sha256").update(`${seed}|${text}`).digest();
  const next = (kind: string) => {
    const n = (counters[kind] ?? 0) + 1;
    counters[kind] = n;
    return hash(`${kind}|${n}`);
  };
  return {
    digits(kind, length) {
      const bytes = next(kind);
      let out = "";
      for (let i = 0; out.length < length; i++) out += String(bytes[i % bytes.length]! % 10);
      // never start with 0, so the id survives a round trip through a number-typed column
      return out[0] === "0" ? `9${out.slice(1)}` : out;
    },
    hex(kind, length) {
      return next(kind).toString("hex").slice(0, length);
    },
    intFor(key, min, max) {
      return min + (hash(key).readUInt32BE(0) % (max - min + 1));
    },
    fakerFor(key) {
      // one shared instance, seeded right before each use (Node runs one request at a time)
      englishFaker.seed(hash(key).readUInt32BE(0));
      return englishFaker;
    },
  };
}
