// What is sandbox-wide on the shared store (redis-store.ts): the scenario choice, the clock, the seed
// and the generation a reset of everything starts, in one versioned record. Every unit checks its
// version as it takes its turn; it changes only in a unit that names no merchant, under the
// settings' own turn (the lock, its lease renewed while held), which this file takes and gives back.
import { createIds, type Ids } from "../../domain/ids.js";
import { StoreRefusal, asUnavailable, StoreUnavailable, type SharedParts } from "../store.js";
import { adoptSettings, settingsOf, type SandboxSettings } from "../shared-settings.js";
import type { Link } from "./redis-link.js";
import { newerLayout, REDIS_LAYOUT } from "./redis-layout.js";
import type { globalKeys, Script, Scripts } from "./redis-scripts.js";
import { createTurns, leaseKeeper, type Turns } from "./turns.js";
import { timing } from "../../config/timings.js";

/** The record as Redis holds it: its version, seed, generation, the settings as JSON and the layout. */
export interface Known {
  v: number;
  seed: string;
  gen: string;
  json: string;
  layout: number;
}

/** The record from HGETALL's (or the init script's) flat list of fields and values. */
export function readSettings(flat: string[]): Known {
  const m = new Map<string, string>();
  for (let i = 0; i < flat.length; i += 2) m.set(flat[i]!, flat[i + 1]!);
  return { v: Number(m.get("v") ?? 0), seed: m.get("seed") ?? "", gen: m.get("gen") ?? "", json: m.get("json") ?? "", layout: Number(m.get("layout") ?? 2) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface SettingsHooks {
  /** the clock and scenarios the settings are of (once shared) */
  parts(): SharedParts | undefined;
  /** a reset of everything happened elsewhere: every merchant held here is dropped */
  generationChanged(): void;
  /** more to bring up to date as the settings' turn is taken (the shared request log) */
  onTurn(): Promise<unknown>;
}

export class SettingsRecord {
  /** the settings' turn: one unit of every merchant (or of the settings) at a time, across replicas */
  readonly turns: Turns;
  private lastSettings: string;
  private currentIds: Ids;
  private readonly lease: { keep(): void; stop(): void };

  constructor(
    private readonly link: Link,
    private readonly global: ReturnType<typeof globalKeys>,
    private readonly token: string,
    private readonly scripts: Pick<Scripts, "renew" | "release"> & { take: Script; write: Script },
    private record: Known,
    private readonly hooks: SettingsHooks,
  ) {
    this.lastSettings = record.json;
    this.currentIds = createIds(record.seed, {});
    this.lease = leaseKeeper(scripts.renew, global.lock, token);
    this.turns = createTurns(
      async () => {
        try {
          for (let waited = 0; !Number(await scripts.take([global.lock], [token, timing("leaseMs")])); waited++) await sleep(waited < 20 ? 1 : 5);
          this.lease.keep();
          await Promise.all([this.check(), hooks.onTurn()]);
        } catch (err) {
          await this.release();
          throw asUnavailable(err);
        }
      },
      async () => {
        await this.write().catch(() => undefined);
        await this.release();
      },
    );
  }

  get known(): Known {
    return this.record;
  }

  /** the sandbox's ids (made from its seed) */
  get ids(): Ids {
    return this.currentIds;
  }

  /** why this replica must not use the sandbox (a newer layout), said by every unit */
  refused(): StoreRefusal | undefined {
    return this.record.layout > REDIS_LAYOUT ? new StoreRefusal(newerLayout(this.record.layout)) : undefined;
  }

  private now(): SandboxSettings | undefined {
    const parts = this.hooks.parts();
    return parts && settingsOf(parts);
  }

  /** Settings another replica wrote (or Redis held at the start), in force here. */
  adopt(next: Known): void {
    const generationChanged = next.gen !== this.record.gen;
    if (next.seed !== this.record.seed) this.currentIds = createIds(next.seed, {});
    this.record = next;
    if (generationChanged) this.hooks.generationChanged();
    const parts = this.hooks.parts();
    if (!parts || !next.json) return;
    adoptSettings(parts, JSON.parse(next.json) as SandboxSettings);
    this.lastSettings = JSON.stringify(this.now());
  }

  /** The clock and scenarios are shared now: what Redis holds is put in force, or written at the next turn. */
  shared(): void {
    if (this.record.json) this.adopt(this.record);
    else this.lastSettings = "";
  }

  /** The settings' version, and the settings when it moved; a newer layout refused. */
  async check(): Promise<void> {
    const { client, again } = this.link;
    const [v, layout] = await again(() => client.hmget(this.global.settings, "v", "layout"));
    if (Number(v ?? 0) !== this.record.v || Number(layout ?? 2) !== this.record.layout)
      this.adopt(readSettings(await again(() => client.hgetall(this.global.settings)).then((h) => Object.entries(h).flat())));
    const refusal = this.refused();
    if (refusal) throw refusal;
  }

  /** Writes the settings if they changed here (the caller holds their turn); `generation` starts a new one. */
  async write(generation = ""): Promise<void> {
    const settings = this.now();
    const json = settings ? JSON.stringify(settings) : this.record.json;
    if (json === this.lastSettings && generation === "") return;
    const g = this.global;
    const v = Number(await this.scripts.write([g.lock, g.settings, g.merchants, g.where, g.due], [this.token, timing("leaseMs"), json, generation]));
    if (v < 0) throw new StoreUnavailable("this replica's turn of the settings ran out before they were written");
    this.record = { ...this.record, v, json, gen: generation || this.record.gen };
    this.lastSettings = json;
  }

  /** Gives the settings' lock back (nothing said if it cannot: its lease runs out). */
  release(): Promise<void> {
    this.lease.stop();
    return this.scripts.release([this.global.lock], [this.token]).then(
      () => undefined,
      () => undefined,
    );
  }
}
