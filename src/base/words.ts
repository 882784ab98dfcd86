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
