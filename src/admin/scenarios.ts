// /__sandbox/scenarios: list scenarios, set the global one, bind one to a merchant, reload files.
import { Router, type Response } from "express";
import { GatewayError } from "../codes.js";
import type { Deps } from "../deps.js";
import { problem } from "./shared.js";
import { scenarioNameBody } from "./bodies.js";


export function scenariosApi(deps: Deps): Router {
  const router = Router();
  const registry = deps.scenarios;
  const nameOf = (body: unknown) => {
    const parsed = scenarioNameBody.safeParse(body ?? {});
    return parsed.success ? parsed.data.name : undefined;
  };
  /** Makes the change and saves it (with a shared store every replica follows it from now on); false when the name is unknown. */
  const guarded = async (res: Response, fn: () => void) => {
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

  router.get("/scenarios", (_req, res) => {
    res.json({
      global: registry.global(),
      bindings: registry.bindings(),
      scenarios: registry.list().map((s) => ({ name: s.name, description: s.description, extends: s.extends, rules: s.rules.length })),
      errors: registry.errors(),
    });
  });

  router.get("/scenarios/:name", (req, res) => {
    const scenario = registry.get(req.params.name);
    if (!scenario) return problem(res, 404, "unknown_scenario", `no scenario "${req.params.name}"`);
    res.json(scenario);
  });

  // { "name": "declines" }: the scenario for every merchant without a binding
  router.put("/scenarios/global", async (req, res) => {
    const name = nameOf(req.body);
    if (name === undefined) return problem(res, 400, "invalid_name", 'send {"name": "<scenario>"}');
    if (await guarded(res, () => registry.setGlobal(name))) res.json({ global: registry.global() });
  });

  // { "name": "3ds" }: this merchant's requests use that scenario (unless a request sends X-Sandbox-Scenario)
  router.put("/scenarios/bindings/:merchantId", async (req, res) => {
    const name = nameOf(req.body);
    if (name === undefined) return problem(res, 400, "invalid_name", 'send {"name": "<scenario>"}');
    if (await guarded(res, () => registry.bind(req.params.merchantId, name))) res.json({ merchant_id: req.params.merchantId, scenario: name });
  });

  router.delete("/scenarios/bindings/:merchantId", async (req, res) => {
    if (!registry.unbind(req.params.merchantId)) return problem(res, 404, "not_bound", `merchant ${req.params.merchantId} has no scenario binding`);
    await deps.store.commit();
    res.json({ merchant_id: req.params.merchantId, scenario: registry.global() });
  });

  // re-reads the folder now (files also reload by themselves when edited)
  router.post("/scenarios/reload", (_req, res) => {
    const errors = registry.reload();
    res.status(errors.length ? 422 : 200).json({ errors, scenarios: registry.list().map((s) => s.name) });
  });

  return router;
}
