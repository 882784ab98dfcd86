// Words a tester reads: a count with its noun in the right number.

/** "1 attempt", "2 attempts", "0 attempts"; `many` for a noun that does not just add an s. */
export const counted = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

/** What X-Sandbox-Rule names after a scenario's name when no rule of it answered: "default/(no rule)". */
export const NO_RULE = "/(no rule)";
export const isNoRule = (rule: string): boolean => rule.endsWith(NO_RULE);

/** A rule as a tester reads it: "<scenario>/(no rule)" is that scenario's default answer. */
export const ruleShown = (rule: string): string =>
  rule
    .split(", ")
    .map((one) => (isNoRule(one) ? `default answer (scenario ${one.slice(0, -NO_RULE.length)})` : one))
    .join(", ");

/** A span of time as a tester reads it: "45 s", "12 min", "2 h", "2 h 5 min", "40 days", "3 days 4 h"; a negative one with a minus. */
export function durationText(ms: number): string {
  if (ms < 0) return `-${durationText(-ms)}`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  const [big, unit, rest, restUnit] =
    s < 86_400 ? [Math.floor(s / 3600), "h", Math.floor((s % 3600) / 60), "min"] : [Math.floor(s / 86_400), "day", Math.floor((s % 86_400) / 3600), "h"];
  const head = unit === "day" ? counted(big, "day") : `${big} h`;
  return rest ? `${head} ${rest} ${restUnit}` : head;
}
