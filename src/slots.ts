// A counting semaphore, at most `max` of something at once (notification attempts, whole loads of a
// merchant from Redis, heavy operator calls): acquire() waits for a slot, release() hands it to the
// next waiter, in order. With `maxWaiting`, tryAcquire() refuses (undefined) when that many wait already.
export interface Slots {
  acquire(): Promise<void>;
  /** a slot now or in turn, or undefined when `maxWaiting` callers wait already */
  tryAcquire(): Promise<void> | undefined;
  release(): void;
}

export function createSlots(max: number, maxWaiting = Infinity): Slots {
  let active = 0;
  const waiting: (() => void)[] = [];
  const acquire = (): Promise<void> => {
    if (active < max) {
      active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => waiting.push(resolve));
  };
  return {
    acquire,
    tryAcquire: () => (active < max || waiting.length < maxWaiting ? acquire() : undefined),
    release(): void {
      const next = waiting.shift();
      if (next) next();
      else active--;
    },
  };
}
