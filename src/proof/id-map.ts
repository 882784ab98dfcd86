// The real gateway's ids, as Sandgate issued them for the same requests. After each exchange the
// two answers are walked side by side: where a volatile value (a transaction id, a refund
// reference, a page address) differs, the recorded one maps to Sandgate's. A later request that
// sends a recorded id (a capture of that transaction, the payer opening that page) is replayed with
// Sandgate's, and a recorded answer that echoes one is compared with it mapped.
import type { Tree } from "./documents.js";
import { mustAgree, shapeOf } from "./shapes.js";

/** Shapes of values that name something and so can be sent back later; times, amounts, codes cannot. */
const ID_SHAPES = new Set(["digits", "text", "URL", "UUID"]);
/** shorter values ("1", "ACH") are codes, not ids: mapping them would rewrite unrelated fields */
const MIN_ID_LENGTH = 6;

export class IdMap {
  private readonly ids = new Map<string, string>();

  get size(): number {
    return this.ids.size;
  }

  /** A recorded value in Sandgate's terms: a known id, a list of them, or a URL or path built of them. */
  map(value: string): string {
    const whole = this.ids.get(value);
    if (whole !== undefined) return whole;
    if (value.includes(","))
      return value
        .split(",")
        .map((part) => this.ids.get(part.trim()) ?? part)
        .join(",");
    if (value.includes("/")) return this.mapUrl(value);
    return value;
  }

  /** A text that may name ids ("capture refused: payment 8557431551080488 is declined"), each in Sandgate's terms. */
  mapText(text: string): string {
    const whole = this.map(text);
    if (whole !== text) return whole;
    let out = text;
    for (const word of new Set(text.match(/[\w.-]{6,}/g) ?? [])) {
      const mapped = this.ids.get(word);
      if (mapped !== undefined) out = out.split(word).join(mapped);
    }
    return out;
  }

  /** A URL or path: a known path (with or without the recorded origin), else each known segment. */
  mapUrl(url: string): string {
    const m = /^(https?:\/\/[^/?#]+)?([^?#]*)(\?[^#]*)?/.exec(url);
    const origin = m?.[1] ?? "";
    const path = m?.[2] ?? url;
    const query = m?.[3] ?? "";
    const mappedPath =
      this.ids.get(`${origin}${path}`) ??
      this.ids.get(path) ??
      `${origin}${path
        .split("/")
        .map((s) => this.ids.get(s) ?? s)
        .join("/")}`;
    const mappedQuery = query.replace(/=([^&]*)/g, (all, v: string) => {
      const decoded = safeDecode(v);
      const mapped = this.ids.get(decoded);
      return mapped === undefined ? all : `=${encodeURIComponent(mapped)}`;
    });
    return `${mappedPath}${mappedQuery}`;
  }

  /** Learns from a recorded answer and Sandgate's, walked in parallel (same paths only). */
  learn(recorded: Tree, actual: Tree, field = ""): void {
    if (recorded.kind === "value" && actual.kind === "value") return this.pair(recorded.value, actual.value, field);
    if (recorded.kind === "list" && actual.kind === "list") {
      recorded.items.forEach((item, i) => {
        const other = actual.items[i];
        if (other) this.learn(item, other, field);
      });
      return;
    }
    if (recorded.kind !== "object" || actual.kind !== "object") return;
    const seen = new Map<string, number>();
    for (const [key, value] of recorded.entries) {
      const nth = seen.get(key) ?? 0;
      seen.set(key, nth + 1);
      const other = actual.entries.filter(([k]) => k === key)[nth];
      if (other) this.learn(value, other[1], key);
    }
  }

  private pair(recorded: unknown, actual: unknown, field: string): void {
    if (typeof recorded !== "string" || typeof actual !== "string" || recorded === actual) return;
    if (recorded.length < MIN_ID_LENGTH || mustAgree(field) || this.ids.has(recorded)) return;
    const shape = shapeOf(recorded, field);
    if (!ID_SHAPES.has(shape) || shapeOf(actual, field) !== shape) return;
    this.ids.set(recorded, actual);
    if (shape === "URL") {
      // a page address is opened later by its path too (through the recorder, on another origin)
      const r = new URL(recorded);
      const a = new URL(actual);
      if (r.pathname.length > 1) this.ids.set(r.pathname, a.pathname);
    }
  }
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v.replace(/\+/g, " "));
  } catch {
    return v;
  }
}
