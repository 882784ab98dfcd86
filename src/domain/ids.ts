// Deterministic ids and generated values. Every value is derived from (seed, kind, counter): the
// same seed and the same sequence of requests give the same ids, and the counters live in the
// store so a restart with --data continues where it stopped instead of repeating ids.
import { hash as digest } from "node:crypto";
import { createRequire } from "node:module";
import type { Faker } from "@faker-js/faker";

const require = createRequire(import.meta.url);
let english: Faker | undefined;
/**
 * The English faker, loaded on first use (a new merchant's name): most runs never need it, and
 * loading it at start cost ~16 ms and ~6 MB. The English locale alone: the package root loads
 * every locale (~150 ms).
 */
const englishFaker = (): Faker => (english ??= (require("@faker-js/faker/locale/en") as { faker: Faker }).faker);

export type Counters = Record<string, number>;

export interface Ids {
  /** `length` digits after an optional prefix, e.g. a transaction id (16) or "RN" + 12. */
  digits(kind: string, length: number, prefix?: string): string;
  /** lowercase hex of the given length after an optional prefix, e.g. a token or page id. */
  hex(kind: string, length: number, prefix?: string): string;
  /** An integer in [min, max] (32-bit signed bounds) derived from a stable key (not a counter): same key, same number. */
  intFor(key: string, min: number, max: number): number;
  /** The English faker seeded from a stable key, for plausible names and words: use it at once (it is shared). */
  fakerFor(key: string): Faker;
}

export function createIds(seed: string, counters: Counters): Ids {
  // crypto.hash: the one-shot digest, without a Hash object per id
  const hash = (text: string) => digest("sha256", `${seed}|${text}`, "buffer");
  const next = (kind: string) => {
    const n = (counters[kind] ?? 0) + 1;
    counters[kind] = n;
    return hash(`${kind}|${n}`);
  };
  return {
    digits(kind, length, prefix = "") {
      const bytes = next(kind);
      // written into one buffer: a flat string, where `+=` would keep a chain of pieces per id in memory
      const out = Buffer.allocUnsafe(prefix.length + length);
      out.write(prefix, "latin1");
      for (let i = 0; i < length; i++) out[prefix.length + i] = 48 + (bytes[i % bytes.length]! % 10);
      // never start with 0, so the id survives a round trip through a number-typed column
      if (out[prefix.length] === 48) out[prefix.length] = 57;
      return out.toString("latin1");
    },
    hex(kind, length, prefix = "") {
      const hex = next(kind)
        .toString("hex", 0, Math.ceil(length / 2))
        .slice(0, length);
      return prefix ? Buffer.from(prefix + hex, "latin1").toString("latin1") : hex;
    },
    intFor(key, min, max) {
      // `| 0` keeps it a small integer: the 32-bit read is a boxed double from 2^31 up and so was the
      // remainder, which made every stored payment's risk_score one more object on the heap
      return (min + (hash(key).readUInt32BE(0) % (max - min + 1))) | 0;
    },
    fakerFor(key) {
      // one shared instance, seeded right before each use (Node runs one request at a time)
      const faker = englishFaker();
      faker.seed(hash(key).readUInt32BE(0));
      return faker;
    },
  };
}
