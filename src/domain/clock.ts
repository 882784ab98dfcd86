// The sandbox clock: real time plus an offset that the operator can advance.
// Domain code receives `now` from here, never from Date.now().
export interface Clock {
  now(): Date;
  advance(ms: number): Date;
  offsetMs(): number;
  /** with a shared store: the offset another replica set (a clock of your own without it is not shared) */
  setOffset?(ms: number): void;
}

/**
 * The real time at the instant the sandbox's clock read `sandboxNow`: what the clocks of the world
 * outside say (a receiver's freshness window), however far the sandbox's clock was moved.
 */
export const realTimeOf = (clock: Pick<Clock, "offsetMs">, sandboxNow: Date): Date => new Date(sandboxNow.getTime() - clock.offsetMs());

export function createClock(realNow: () => number = Date.now): Clock {
  let offset = 0;
  return {
    now: () => new Date(realNow() + offset),
    advance(ms: number) {
      offset += ms;
      return new Date(realNow() + offset);
    },
    offsetMs: () => offset,
    setOffset(ms) {
      offset = ms;
    },
  };
}
