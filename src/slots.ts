// A counting semaphore, at most `max` of something at once (notification attempts, whole loads of a merchant from Redis):
// acquire() waits for a slot, release() hands it to the next waiter, in order.
export interface Slots {
  acquire(): Promise<void>;
  release(): void;
}

export function createSlots(max: number): Slots {
  let active = 0;
  const waiting: (() => void)[] = [];
  return {
    acquire(): Promise<void> {
      if (active < max) {
        active++;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    release(): void {
      const next = waiting.shift();
      if (next) next();
      else active--;
    },
  };
}
