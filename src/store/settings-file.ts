// With --data, the sandbox-wide settings (shared-settings.ts: the clock's setting, the global
// scenario, merchants' bindings) are kept beside the state file, in <data>.settings.json: read when
// the clock and scenarios are handed to the store, written whole or not at all (a new file renamed
// over the old) by the first commit after they changed. The scenarios saved from the editor keep
// their own file (<data>.scenarios.json, scenarios/saved-scenarios.ts).
import { existsSync, readFileSync } from "node:fs";
import { writeWhole } from "../base/write-whole.js";
import { StoreError, type SharedParts } from "./store.js";
import { z } from "zod";
import { adoptSettings, settingsOf } from "./shared-settings.js";

type Parts = Pick<SharedParts, "clock" | "scenarios">;

/** What the file holds: the settings without the saved scenarios (their own file has them). */
const KEPT = z.object({
  clock_offset_ms: z.number(),
  clock_frozen_at_ms: z.number().optional(),
  scenario: z.object({ global: z.string(), bindings: z.record(z.string(), z.string()) }),
});

export function settingsFile(file: string): { share(parts: Parts): void; save(): void } {
  let parts: Parts | undefined;
  /** what was last read or written: the clock's setting (replaced whenever it moves) and the choice's version */
  let clockWritten: unknown;
  let choiceWritten = -1;
  const remember = (p: Parts) => {
    clockWritten = p.clock.setting();
    choiceWritten = p.scenarios.choiceVersion();
  };
  return {
    share(given) {
      parts = given;
      if (existsSync(file)) {
        let kept: z.infer<typeof KEPT>;
        try {
          const read = KEPT.safeParse(JSON.parse(readFileSync(file, "utf8")));
          if (!read.success) throw new Error("not a settings file");
          kept = read.data;
        } catch (err) {
          throw new StoreError(`${file}: cannot read the clock and scenario settings (${(err as Error).message}); move it away`);
        }
        // the scenarios saved from the editor are in their own file, already in force
        adoptSettings(given, { ...kept, scenario: { ...kept.scenario, own: given.scenarios.own() } });
      }
      remember(given);
    },
    save() {
      if (!parts || (parts.clock.setting() === clockWritten && parts.scenarios.choiceVersion() === choiceWritten)) return;
      const now = settingsOf(parts);
      const { own: _own, ...scenario } = now.scenario;
      writeWhole(file, `${JSON.stringify({ ...now, scenario })}\n`);
      remember(parts);
    },
  };
}
