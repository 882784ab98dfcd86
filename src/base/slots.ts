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

/** Slots shared fairly between keys (merchants): each holds at most `perKey`, and the waiting keys take turns. */
export interface FairSlots {
  acquire(key: string): Promise<void>;
  release(key: string): void;
}

/**
 * At most `max` at once, at most `perKey` of them for one key; a freed slot goes to the next key in
 * turn that has something waiting and is under its share (round robin, each key's waiters in
 * order). So one merchant whose receiver hangs holds only its share, and another's attempt leaves
 * as soon as a slot is free, however many of the first one's wait.
 */
export function createFairSlots(max: number, perKey: number): FairSlots {
  let active = 0;
  const held = new Map<string, number>();
  /** keys with waiters, in the order they take turns (a key goes to the end once served) */
  const waiting = new Map<string, (() => void)[]>();
  const grant = (key: string) => {
    active++;
    held.set(key, (held.get(key) ?? 0) + 1);
  };
  const serveNext = (): boolean => {
    for (const [key, queue] of waiting) {
      if ((held.get(key) ?? 0) >= perKey) continue;
      const resolve = queue.shift()!;
      waiting.delete(key);
      if (queue.length) waiting.set(key, queue);
      grant(key);
      resolve();
      return true;
    }
    return false;
  };
  return {
    acquire(key) {
      if (active < max && (held.get(key) ?? 0) < perKey && !waiting.has(key)) {
        grant(key);
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const queue = waiting.get(key);
        if (queue) queue.push(resolve);
        else waiting.set(key, [resolve]);
      });
    },
    release(key) {
      active--;
      const left = (held.get(key) ?? 1) - 1;
      if (left > 0) held.set(key, left);
      else held.delete(key);
      while (active < max && serveNext());
    },
  };
}
