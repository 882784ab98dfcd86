// Operator calls: The scenarios: list, read, choose the sandbox's, bind one to a merchant, reload the files.
// Entries of the one table (src/api/operator-calls.ts); see OperatorCall for what each field means.
import { z } from "zod";
import { MALFORMED, type OperatorCall } from "../operator-call.js";
import { reloaded, scenario, scenarioList } from "../operator-answers.js";
import { scenarioNameBody } from "../operator-bodies.js";

const s = z.string();

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
] as const satisfies readonly OperatorCall[];
