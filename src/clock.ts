// The sandbox clock: real time plus an offset that the operator can advance.
// Domain code receives `now` from here, never from Date.now().
export interface Clock {
  now(): Date;
  advance(ms: number): Date;
  offsetMs(): number;
  /** with a shared store: the offset another replica set (a clock of your own without it is not shared) */
  setOffset?(ms: number): void;
}

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
