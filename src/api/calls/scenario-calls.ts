// Operator calls: The scenarios: list, read, choose the sandbox's, bind one to a merchant, reload the
// files; check a scenario's text and save it (the dashboard's editor).
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { reloaded, scenario, scenarioList } from "../operator-answers.js";
import { scenarioCheckBody, scenarioNameBody, scenarioSourceBody } from "../operator-bodies.js";

const s = z.string();
const sourceProblems = z.array(
  z.strictObject({ path: s.describe('"rules.2.when.operation"; empty: the whole text'), line: z.number().int().describe("0: not one line"), message: s }),
);

export const SCENARIO_CALLS = [
  {
    method: "get",
    path: "/__sandbox/scenarios",
    operationId: "listScenarios",
    scope: "all",
    summary: "scenarios, the global one, bindings, file errors",
    answer: scenarioList,
  },
  {
    method: "get",
    path: "/__sandbox/scenarios/{name}",
    operationId: "getScenario",
    scope: "all",
    summary: "one scenario with its rules",
    answer: scenario,
    problems: { 404: "unknown_scenario" },
  },
  {
    method: "put",
    path: "/__sandbox/scenarios/global",
    operationId: "setGlobalScenario",
    form: "/__sandbox/ui/scenarios/global",
    scope: "all",
    body: scenarioNameBody,
    summary: 'the global scenario: {"name":"declines"}',
    answer: z.strictObject({ global: s }),

    problems: { 400: `invalid_name: no name; ${MALFORMED}`, 404: "unknown_scenario" },
  },
  {
    method: "put",
    path: "/__sandbox/scenarios/bindings/{merchantId}",
    operationId: "bindScenario",
    form: "/__sandbox/ui/scenarios/bind",
    scope: "all",
    body: scenarioNameBody,
    summary: 'one merchant\'s scenario: {"name":"3ds"}',
    answer: z.strictObject({ merchant_id: s, scenario: s }),

    problems: { 400: `invalid_name: no name; ${MALFORMED}`, 404: "unknown_scenario" },
  },
  {
    method: "delete",
    path: "/__sandbox/scenarios/bindings/{merchantId}",
    operationId: "unbindScenario",
    form: "/__sandbox/ui/scenarios/unbind",
    scope: "all",
    summary: "removes a merchant's binding",
    answer: z.strictObject({ merchant_id: s, scenario: s.describe("the global scenario, which applies now") }),
    problems: { 404: "not_bound" },
  },
  {
    method: "post",
    path: "/__sandbox/scenarios/reload",
    operationId: "reloadScenarios",
    scope: "all",
    summary: "reads the scenario files again",
    answer: reloaded,
    alike: [422, "a scenario file could not be read (errors says which; the others are loaded)"],
  },
  {
    method: "post",
    path: "/__sandbox/scenarios/check",
    operationId: "checkScenario",
    scope: "none",
    body: scenarioCheckBody,
    summary: "checks a scenario's text without saving it: every problem with its line, and with a sample request, the rule that answers it",
    answer: z.strictObject({
      valid: z.boolean(),
      name: s.optional(),
      problems: sourceProblems,
      rules: z.number().int().optional().describe("its rules once resolved (its parents' included)"),
      answer: z
        .strictObject({
          rules: z.array(s).describe("the rules that matched, first the one that decided; none: the default answer"),
          outcome: s.nullable(),
          then: z.record(s, z.unknown()),
        })
        .optional(),
    }),
    problems: { 400: `invalid_body: no source, or a sample without an operation; ${MALFORMED}` },
  },
  {
    method: "post",
    path: "/__sandbox/scenarios",
    operationId: "saveScenario",
    form: "/__sandbox/ui/scenarios/save",
    scope: "all",
    body: scenarioSourceBody,
    status: 201,
    summary:
      "saves a scenario (checked first: one with a problem is never saved): into the --scenarios folder when it is the merchant's own and writable, else into the sandbox's state (kept beside --data, shared on Redis, in state exports); a shipped scenario's name is refused",
    answer: z.strictObject({ name: s, saved_to: z.enum(["folder", "state"]), file: s.optional(), replaced: z.boolean() }),
    problems: {
      400: `invalid_body: no source; ${MALFORMED}`,
      422: {
        description: "invalid_scenario: the text has problems (each with its line); nothing was saved",
        schema: z.strictObject({ error: s, message: s, problems: sourceProblems }),
      },
    },
  },
] as const satisfies readonly OperatorCall[];
