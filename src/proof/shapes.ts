// What verify compares of a value, by the field's name and the value itself: one table of the
// values that must agree (status codes, result codes and texts, currencies, amounts), and the
// shape of everything else. Volatile values (ids, times, signatures, tokens, addresses) differ on
// every run by nature, so they are compared by shape only.

/** The shape of a value, as a name a person reads in a report ("amount with two decimals"). */
export function shapeOf(value: unknown, field = ""): string {
  if (value === null) return "null";
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "boolean";
  if (typeof value !== "string") return Array.isArray(value) ? "list" : "object";
  for (const [name, test] of STRING_SHAPES) if (test(value, field)) return name;
  return "text";
}

const DATE_NAME = /(date|time|_at)$/i;
/** a YYYYMMDDhhmmss whose parts are a real date and time */
const isStamp = (v: string) => {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(v);
  return !!m && +m[2]! >= 1 && +m[2]! <= 12 && +m[3]! >= 1 && +m[3]! <= 31 && +m[4]! < 24 && +m[5]! < 60 && +m[6]! < 60;
};

/** First match wins; the order puts the narrow shapes before the wide ones ("digits", "text"). */
const STRING_SHAPES: readonly [string, (v: string, field: string) => boolean][] = [
  ["empty", (v) => v === ""],
  ["YYYYMMDDhhmmss", (v, f) => DATE_NAME.test(f) && isStamp(v)],
  ["YYYY-MM-DD HH:MM:SS", (v) => /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(v)],
  ["YYYY-MM-DD", (v) => /^\d{4}-\d{2}-\d{2}$/.test(v)],
  ["ISO 8601 date-time", (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/.test(v)],
  ["64-hex signature", (v) => /^[0-9a-fA-F]{64}$/.test(v)],
  ["masked card", (v) => /^\d{6}\*+\d{4}$/.test(v)],
  ["amount with two decimals", (v) => /^-?\d+\.\d{2}$/.test(v)],
  ["decimal", (v) => /^-?\d+\.\d+$/.test(v)],
  ["digits", (v) => /^\d+$/.test(v)],
  ["negative integer", (v) => /^-\d+$/.test(v)],
  ["URL", (v) => /^https?:\/\/\S+$/i.test(v)],
  ["CODE:text", (v) => /^[A-Za-z0-9]{1,10}:\S/.test(v)],
  ["UUID", (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)],
  ["text", () => true],
];

/**
 * Why a field's value must agree, or undefined when its shape is enough. By the field's own name
 * (the last part of its path): the gateway's status codes, result codes and texts, currencies and
 * amounts. Fields that echo the request are found by value (see compare.ts).
 */
export function mustAgree(field: string): string | undefined {
  let why = agreeing.get(field);
  if (why === undefined) {
    why = MUST_AGREE.find(([, test]) => test.test(field))?.[0] ?? "";
    agreeing.set(field, why);
  }
  return why || undefined;
}

/** answers repeat the same few hundred field names: each is looked up once */
const agreeing = new Map<string, string>();

const MUST_AGREE: readonly [string, RegExp][] = [
  ["a status code", /(^|_)status$|^query_result$|^return_status$/],
  ["a result code or text", /^(result_info|error_message|refund_message|return_message|failure_reason|failure_type|threeds_result|risk_action)$/],
  ["a currency", /currency$/],
  ["an amount", /(^|_)amount($|_)|^amount_/],
  ["the loading page's form", /^form\.(name|method)$/],
  ["a notification's event", /^event$/],
];
