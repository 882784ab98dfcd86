// /__sandbox/scenarios: list scenarios, set the global one, bind one to a merchant, reload files.
import { type Response } from "express";
import { GatewayError } from "../domain/codes.js";
import type { Deps } from "../deps/deps.js";
import { depsOf } from "../http/in-unit.js";
import type { On } from "./call-handlers.js";
import { problem, pathParam } from "./shared.js";
import { scenarioCheckBody, scenarioNameBody, scenarioSourceBody } from "../api/operator-bodies.js";
import { saveScenario } from "./scenario-editor.js";

export function scenariosApi(server: Deps, on: On): void {
  const registry = server.scenarios;
  const nameOf = (body: unknown) => {
    const parsed = scenarioNameBody.safeParse(body ?? {});
    return parsed.success ? parsed.data.name : undefined;
  };
  /** Makes the change and saves it (with a shared store every replica follows it from now on); false when the name is unknown. */
  const guarded = async (res: Response, deps: Deps, fn: () => void) => {
    try {
      fn();
      await deps.store.commit();
      return true;
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      problem(res, 404, "unknown_scenario", err.info);
      return false;
    }
  };

  on("listScenarios", (_req, res) => {
    res.json({
      global: registry.global(),
      bindings: registry.bindings(),
      scenarios: registry.list().map((s) => ({ name: s.name, description: s.description, extends: s.extends, rules: s.rules.length })),
      errors: registry.errors(),
    });
  });

  on("getScenario", (req, res) => {
    const scenario = registry.get(pathParam(req, "name"));
    if (!scenario) return problem(res, 404, "unknown_scenario", `no scenario "${pathParam(req, "name")}"`);
    res.json(scenario);
  });

  // { "name": "declines" }: the scenario for every merchant without a binding
  on("setGlobalScenario", async (req, res) => {
    const deps = depsOf(res, server);
    const name = nameOf(req.body);
    if (name === undefined) return problem(res, 400, "invalid_name", 'send {"name": "<scenario>"}');
    if (await guarded(res, deps, () => registry.setGlobal(name))) res.json({ global: registry.global() });
  });

  // { "name": "3ds" }: this merchant's requests use that scenario (unless a request sends X-Sandbox-Scenario)
  on("bindScenario", async (req, res) => {
    const deps = depsOf(res, server);
    const name = nameOf(req.body);
    if (name === undefined) return problem(res, 400, "invalid_name", 'send {"name": "<scenario>"}');
    if (await guarded(res, deps, () => registry.bind(pathParam(req, "merchantId"), name)))
      res.json({ merchant_id: pathParam(req, "merchantId"), scenario: name });
  });

  on("unbindScenario", async (req, res) => {
    const deps = depsOf(res, server);
    if (!registry.unbind(pathParam(req, "merchantId")))
      return problem(res, 404, "not_bound", `merchant ${pathParam(req, "merchantId")} has no scenario binding`);
    await deps.store.commit();
    res.json({ merchant_id: pathParam(req, "merchantId"), scenario: registry.global() });
  });

  // the editor's two calls: check a text (and try a request on it), save it
  on("checkScenario", (req, res) => {
    const body = scenarioCheckBody.safeParse(req.body ?? {});
    if (!body.success)
      return problem(res, 400, "invalid_body", 'send {"source": "<the scenario as YAML or JSON>", "sample": {"operation": "authorise", "fields": {...}}}');
    const checked = registry.check(body.data.source, body.data.sample);
    res.json({
      valid: checked.problems.length === 0,
      ...(checked.name ? { name: checked.name } : {}),
      problems: checked.problems,
      ...(checked.scenario ? { rules: checked.scenario.rules.length } : {}),
      ...(checked.answer ? { answer: { rules: checked.answer.rules, outcome: checked.answer.then.outcome ?? null, then: checked.answer.then } } : {}),
    });
  });
  on("saveScenario", async (req, res) => {
    const body = scenarioSourceBody.safeParse(req.body ?? {});
    if (!body.success) return problem(res, 400, "invalid_body", 'send {"source": "<the scenario as YAML or JSON>"}');
    const done = await saveScenario(depsOf(res, server), body.data.source);
    if ("problems" in done) return res.status(422).json({ error: "invalid_scenario", message: done.message, problems: done.problems });
    res.status(201).json(done.saved);
  });

  // re-reads the folder now (files also reload by themselves when edited)
  on("reloadScenarios", (_req, res) => {
    const errors = registry.reload();
    res.status(errors.length ? 422 : 200).json({ errors, scenarios: registry.list().map((s) => s.name) });
  });
}
