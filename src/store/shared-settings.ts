// The sandbox-wide settings a store keeps besides records: the clock's setting (its offset, a
// freeze) and the scenario choice (the global scenario, merchants' bindings, scenarios saved into
// the state). On Redis they are the settings record every replica reads (redis/settings-record.ts);
// with --data, a file beside it (settings-file.ts), so a restart comes back where QA left it.
import type { ScenarioChoice } from "../scenarios/registry.js";
import type { SharedParts } from "./store.js";

export interface SandboxSettings {
  clock_offset_ms: number;
  /** while set, the sandbox's clock stands still there */
  clock_frozen_at_ms?: number;
  scenario: ScenarioChoice;
}

export function settingsOf(parts: Pick<SharedParts, "clock" | "scenarios">): SandboxSettings {
  const clock = parts.clock.setting();
  return {
    clock_offset_ms: clock.offset_ms,
    ...(clock.frozen_at === undefined ? {} : { clock_frozen_at_ms: clock.frozen_at }),
    scenario: parts.scenarios.choice(),
  };
}

export function adoptSettings(parts: Pick<SharedParts, "clock" | "scenarios">, s: SandboxSettings): void {
  parts.clock.adopt({ offset_ms: s.clock_offset_ms, ...(s.clock_frozen_at_ms === undefined ? {} : { frozen_at: s.clock_frozen_at_ms }) });
  parts.scenarios.adopt(s.scenario);
}
