// The common case of validation without zod's per-field machinery: a schema is compiled once into
// plain functions that accept exactly what zod would accept and build the same output. They only
// ever say "valid, here is the value" or "ask zod" (NOT_SURE): every refusal, and anything they do
// not know (a union's later options, defaults, records...), goes to zod, which writes the messages.
// So a request is never refused here, and an answer never depends on this file but for speed.
// Checks (min, regex, refine...) are zod's own check functions, run on a payload of our own.
// test/fast-parse.test.ts compares it with zod on generated bodies for every operation's schema.
// It reads zod's internal structures, which a zod release may change: package.json takes zod's
// patch releases only (~), so a newer zod comes in by a deliberate bump, with that test run on it.
// Kept because it pays (side by side against zod alone, same run, 5 reps: W1 at 0.83×, W3 at 0.74×
// the CPU per request; W2 1.00, W5 1.08).
import type { z } from "zod";

export const NOT_SURE: unique symbol = Symbol("ask zod");
type Parse = (value: unknown) => unknown;

/** zod's internals as far as this file reads them (zod v4: `schema._zod`). */
interface Internals {
  def: {
    type: string;
    checks?: { _zod: { check(payload: Payload): unknown; def: { check: string } } }[];
    innerType?: Schema;
    in?: Schema;
    out?: Schema;
    transform?: (value: unknown, payload: Payload) => unknown;
    shape?: Record<string, Schema>;
    catchall?: Schema;
    element?: Schema;
    options?: Schema[];
  };
  optin?: "optional" | "defaulted";
  optout?: "optional";
  values?: Set<unknown>;
}
interface Schema {
  _zod: Internals;
}
interface Payload {
  value: unknown;
  issues: unknown[];
}

const compiled = new WeakMap<Schema, Parse>();

/** schema.safeParse(value), answered here when the value is certainly valid. */
export function safeParse<T extends z.ZodType>(schema: T, value: unknown): z.ZodSafeParseResult<z.output<T>> {
  const fast = fastParse(schema, value);
  return fast === NOT_SURE ? schema.safeParse(value) : { success: true, data: fast as z.output<T> };
}

/** The schema's output for `value` when it is certainly valid, else NOT_SURE. */
export function fastParse(schema: z.ZodType, value: unknown): unknown {
  const s = schema as unknown as Schema;
  let parse = compiled.get(s);
  if (!parse) compiled.set(s, (parse = compile(s, GENERATES_CODE)));
  return parse(value);
}

/**
 * Whether this process may turn strings into code: not under `node
 * --disallow-code-generation-from-strings` (a hardened test runner may run startSandbox() so).
 * Object schemas are then walked by a loop instead (see compileObject).
 */
const GENERATES_CODE = (() => {
  try {
    return new Function("return true")() === true;
  } catch {
    return false;
  }
})();

/** fastParse's function for a schema, not cached; `generateCode: false` as where code generation is refused (for tests). */
export function compileFastParse(schema: z.ZodType, generateCode = GENERATES_CODE): Parse {
  return compile(schema as unknown as Schema, generateCode);
}

const notSure: Parse = () => NOT_SURE;

function compile(schema: Schema, generate: boolean): Parse {
  const parse = compileType(schema, generate);
  const checks = (schema._zod.def.checks ?? []).map(compileCheck);
  if (checks.length === 0 || parse === notSure) return parse;
  return (value) => {
    let parsed = parse(value);
    for (let i = 0; i < checks.length && parsed !== NOT_SURE; i++) parsed = checks[i]!(parsed);
    return parsed;
  };
}

type Check = NonNullable<Internals["def"]["checks"]>[number];

/** A check as a Parse: a refine's own function called directly, other kinds through zod's check on a payload. */
function compileCheck(check: Check): Parse {
  const def = check._zod.def as { check: string; fn?: (value: unknown) => unknown };
  if (def.check === "custom" && def.fn) {
    const fn = def.fn;
    return (value) => {
      try {
        const ok = fn(value);
        return ok && !(ok instanceof Promise) ? value : NOT_SURE;
      } catch {
        return NOT_SURE;
      }
    };
  }
  return (value) => {
    const payload: Payload = { value, issues: [] };
    try {
      if (check._zod.check(payload) instanceof Promise) return NOT_SURE;
    } catch {
      return NOT_SURE;
    }
    // an overwrite check (trim, toUpperCase) changes payload.value
    return payload.issues.length > 0 ? NOT_SURE : payload.value;
  };
}

function compileType(schema: Schema, generate: boolean): Parse {
  const { def } = schema._zod;
  switch (def.type) {
    case "string":
      return (v) => (typeof v === "string" ? v : NOT_SURE);
    case "number":
      return (v) => (typeof v === "number" && Number.isFinite(v) ? v : NOT_SURE);
    case "boolean":
      return (v) => (typeof v === "boolean" ? v : NOT_SURE);
    case "unknown":
    case "any":
      return (v) => v;
    case "enum":
    case "literal": {
      const values = schema._zod.values;
      return values ? (v) => (values.has(v) ? v : NOT_SURE) : notSure;
    }
    case "optional": {
      const inner = compile(def.innerType!, generate);
      // an inner default substitutes for absence: zod's business
      const absent = def.innerType!._zod.optin === "defaulted" ? NOT_SURE : undefined;
      return (v) => (v === undefined ? absent : inner(v));
    }
    case "default": {
      // what stands in for absence is zod's business; a value given is the inner schema's
      const inner = compile(def.innerType!, generate);
      return (v) => (v === undefined ? NOT_SURE : inner(v));
    }
    case "nullable": {
      const inner = compile(def.innerType!, generate);
      return (v) => (v === null ? null : inner(v));
    }
    case "pipe": {
      const first = compile(def.in!, generate);
      const then = compile(def.out!, generate);
      return (v) => {
        const mid = first(v);
        return mid === NOT_SURE ? NOT_SURE : then(mid);
      };
    }
    case "transform": {
      const fn = def.transform!;
      // a transform that does not look at the payload (zod's preprocess helpers here) gets none
      const wantsPayload = fn.length >= 2;
      return (v) => {
        const payload: Payload | undefined = wantsPayload ? { value: v, issues: [] } : undefined;
        let out: unknown;
        try {
          out = fn(v, payload as Payload);
        } catch {
          return NOT_SURE;
        }
        return out instanceof Promise || (payload !== undefined && payload.issues.length > 0) ? NOT_SURE : out;
      };
    }
    case "array": {
      const item = compile(def.element!, generate);
      return (v) => {
        if (!Array.isArray(v)) return NOT_SURE;
        const out: unknown[] = new Array(v.length);
        for (let i = 0; i < v.length; i++) {
          const parsed = item(v[i]);
          if (parsed === NOT_SURE) return NOT_SURE;
          out[i] = parsed;
        }
        return out;
      };
    }
    case "union": {
      // zod takes the first option that accepts; only the first can be known to be that one
      const first = def.options?.[0];
      return first ? compile(first, generate) : notSure;
    }
    case "object":
      return compileObject(def.shape!, def.catchall, generate);
    default:
      return notSure;
  }
}

/**
 * As zod's object: shape keys in the shape's order, then the unknown keys (kept, dropped or refused).
 * The shape's walk is generated as code, one statement per key with the key as a literal (written
 * with JSON.stringify, so a key is never code): V8 then reads and writes each field through its own
 * inline cache, where one loop over the keys goes through a single megamorphic one for all of them
 * (the interface document's payment has ~40 fields). Where code may not be generated,
 * the same walk is that loop.
 */
function compileObject(shape: Record<string, Schema>, catchall: Schema | undefined, generate: boolean): Parse {
  const keys = Object.keys(shape);
  // `key in input` would find Object.prototype's members: leave such a shape to zod
  if (keys.some((k) => k in Object.prototype || k === "__proto__")) return notSure;
  const extra = catchall?._zod.def.type;
  if (extra !== undefined && extra !== "unknown" && extra !== "any" && extra !== "never") return notSure;
  const known = new Set(keys);
  const fields: Field[] = keys.map((key) => ({
    key,
    parse: compile(shape[key]!, generate),
    optin: shape[key]!._zod.optin,
    optionalOut: shape[key]!._zod.optout === "optional",
  }));
  const walkShape = generate ? generatedWalk(fields) : loopWalk(fields);
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return NOT_SURE;
    const record = input as Record<string, unknown>;
    const out = walkShape(record);
    if (out === NOT_SURE || extra === undefined) return out;
    const all = out as Record<string, unknown>;
    for (const key in record) {
      if (known.has(key)) continue;
      if (extra === "never") return NOT_SURE;
      if (key !== "__proto__") all[key] = record[key];
    }
    return out;
  };
}

interface Field {
  key: string;
  parse: Parse;
  optin: Internals["optin"];
  optionalOut: boolean;
}
type Walk = (record: Record<string, unknown>) => unknown;

/**
 * Per field: present → parsed and kept; an optional key that is absent contributes nothing,
 * whatever its schema makes of undefined; a required one that is absent is zod's to refuse;
 * otherwise the schema says what absence gives.
 */
function loopWalk(fields: Field[]): Walk {
  return (record) => {
    const out: Record<string, unknown> = {};
    for (const { key, parse, optin, optionalOut } of fields) {
      const present = key in record;
      if (!present && optin === "optional" && optionalOut) continue;
      if (!present && optin === undefined) return NOT_SURE;
      const value = parse(record[key]);
      if (value === NOT_SURE) return NOT_SURE;
      if (present || value !== undefined || optin === "defaulted") out[key] = value;
    }
    return out;
  };
}

/** loopWalk's rules written out as one statement per field. */
function generatedWalk(fields: Field[]): Walk {
  const lines = fields.map(({ key, optin, optionalOut }, i) => {
    const k = JSON.stringify(key);
    const keep = optin === "defaulted" ? `out[${k}] = v;` : `if (v !== undefined) out[${k}] = v;`;
    const absent = optin === "optional" && optionalOut ? "" : optin === undefined ? "return NS;" : `v = p[${i}](undefined); if (v === NS) return NS; ${keep}`;
    return `if (${k} in r) { v = p[${i}](r[${k}]); if (v === NS) return NS; out[${k}] = v; } else { ${absent} }`;
  });
  const make = new Function("p", "NS", `"use strict"; return function (r) { const out = {}; let v; ${lines.join("\n")} return out; };`) as (
    p: Parse[],
    ns: typeof NOT_SURE,
  ) => Walk;
  return make(
    fields.map((f) => f.parse),
    NOT_SURE,
  );
}
