// Who may open units of work now, for the shared store: this replica holds the sandbox-wide turn
// or waits for it. Units that arrive while it holds the turn run on it at once (for TURN_MS at
// most, so the other replicas get theirs); the others wait, and the first of them takes the next
// turn for all. When the last open unit ends, the turn is given back (`finish`), and taken again
// if units are waiting.
import type { Script } from "./redis-scripts.js";
import { timing } from "../../config/timings.js";

/** A replica opens new units on the turn it holds for this long, then lets the others have one. */
const TURN_MS = 10;

export interface Turns {
  /** resolves when this unit may run (rejects when the turn cannot be had: the store is away) */
  enter(): Promise<void>;
  /** the unit is done; the last one out gives the turn back */
  leave(): void;
  /**
   * Called by a unit about to write its last changes: true when it is the only unit open and none
   * waits, so its write may give the turn back too (one trip to the store instead of two). Units
   * arriving from then on wait for the next turn.
   */
  handOver(): boolean;
  /** the copy this turn works on no longer matches Redis (a commit refused): no unit joins it, the next takes a new turn */
  spoil(): void;
  /** true while this replica holds the turn */
  readonly holding: boolean;
  /** true while a unit runs or waits here, or the turn is being taken or given back */
  readonly busy: boolean;
}

/**
 * `take` waits for the turn and brings the copy up to date; `finish` writes what is left and gives
 * the turn back (it must not throw).
 */
export function createTurns(take: () => Promise<void>, finish: () => Promise<void>): Turns {
  let holding = false;
  let ending = false;
  let heldSince = 0;
  let open = 0;
  let taking = false;
  /** the last unit's write gave the turn back: nothing left to finish */
  let handedOver = false;
  let spoiled = false;
  let waiting: { resolve: () => void; reject: (err: unknown) => void }[] = [];

  function next(): void {
    if (taking || holding || !waiting.length) return;
    taking = true;
    take().then(
      () => {
        taking = false;
        holding = true;
        heldSince = performance.now();
        const admitted = waiting;
        waiting = [];
        open += admitted.length;
        for (const w of admitted) w.resolve();
      },
      (err: unknown) => {
        taking = false;
        const refused = waiting;
        waiting = [];
        for (const w of refused) w.reject(err);
      },
    );
  }

  return {
    get holding() {
      return holding;
    },
    get busy() {
      return holding || taking || ending || open > 0 || waiting.length > 0;
    },
    enter() {
      if (holding && !ending && !spoiled && performance.now() - heldSince < TURN_MS) {
        open++;
        return Promise.resolve();
      }
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        next();
      });
    },
    leave() {
      if (--open > 0) return;
      ending = true;
      const done = handedOver ? Promise.resolve() : finish();
      handedOver = false;
      void done.finally(() => {
        holding = false;
        ending = false;
        spoiled = false;
        next();
      });
    },
    spoil() {
      spoiled = true;
    },
    handOver() {
      if (open !== 1 || waiting.length || ending) return false;
      ending = handedOver = true;
      return true;
    },
  };
}

/**
 * Keeps a turn's lease (`lock`, held with `token`) while it is held: renewed every third of the
 * lease from keep() to stop(), so a unit may run longer than the lease, and a replica that dies
 * stops renewing it. A merchant's turn and the settings' turn each have one.
 */
export function leaseKeeper(renew: Script, lock: string, token: string): { keep(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearInterval(timer);
    timer = undefined;
  };
  return {
    keep() {
      stop();
      const leaseMs = timing("leaseMs");
      timer = setInterval(() => void renew([lock], [token, leaseMs]).catch(() => undefined), leaseMs / 3);
      timer.unref();
    },
    stop,
  };
}
