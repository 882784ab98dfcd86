// "90s", "15m", "2h", "3d", "1w" → milliseconds; a bare number is seconds.
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseDuration(value: unknown): number | undefined {
  if (typeof value === "number") return value * 1000;
  if (typeof value !== "string") return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$/.exec(value);
  if (!m) return undefined;
  return Number(m[1]) * UNIT_MS[m[2] || "s"]!;
}
