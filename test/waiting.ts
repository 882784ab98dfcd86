// Waiting for an event in a test: ask until it has happened. The deadline only turns a hang into a
// failure (it is never what a test measures), so it is generous: tens of seconds on a busy machine.
import { setTimeout as sleep } from "node:timers/promises";

/** Resolves once `check` says yes (asked every 50 ms); throws after `ms` of no. */
export async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`still waiting after ${ms / 1000} s`);
    await sleep(50);
  }
}
