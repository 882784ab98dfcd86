// Words a tester reads: a count with its noun in the right number.

/** "1 attempt", "2 attempts", "0 attempts"; `many` for a noun that does not just add an s. */
export const counted = (n: number, word: string, many = `${word}s`): string => `${n} ${n === 1 ? word : many}`;

/** A rule as a tester reads it: "<scenario>/(no rule)" (X-Sandbox-Rule's token) is that scenario's default answer. */
export const ruleShown = (rule: string): string =>
  rule
    .split(", ")
    .map((one) => (one.endsWith("/(no rule)") ? `default answer (scenario ${one.slice(0, -"/(no rule)".length)})` : one))
    .join(", ");
