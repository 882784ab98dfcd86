// Records of texts kept outside the JavaScript heap, the newest overwriting the oldest: a fixed byte
// buffer used as a ring. A record is a list of strings, each written as its UTF-8 bytes after its
// length (no JSON escaping of bodies that are JSON themselves). The request log keeps what it holds
// here, so a busy server's last few thousand requests are not objects the garbage collector
// promotes, scans and drops over and over (with 100,000 payments stored that churn doubled the cost
// of every young collection and the number of full ones). Pages of the buffer become resident only
// as they are written.

export class TextRing {
  private readonly bytes: Buffer;
  /** per slot: where its record starts, on a byte line that only grows (position % capacity in the buffer) */
  private readonly starts: Float64Array;
  /** per slot: its length in bytes (-1: too large to keep) */
  private readonly lengths: Int32Array;
  /** where the next record goes, on the same line */
  private head = 0;
  /** records pushed so far; the next one's sequence number */
  private pushed = 0;

  /** At most `slots` records, together at most `capacity` bytes. */
  constructor(
    private readonly slots: number,
    private readonly capacity: number,
  ) {
    this.bytes = Buffer.allocUnsafeSlow(capacity);
    this.starts = new Float64Array(slots);
    this.lengths = new Int32Array(slots);
  }

  /** Keeps a record (dropping the oldest ones as needed); its sequence number: 0, 1, 2, ... */
  push(fields: readonly string[]): number {
    const seq = this.pushed++;
    const slot = seq % this.slots;
    // at most 3 bytes of UTF-8 per UTF-16 unit, and 4 for each length
    let most = 4;
    for (const field of fields) most += 4 + 3 * field.length;
    if (most > this.capacity) {
      this.starts[slot] = this.head;
      this.lengths[slot] = -1;
      return seq;
    }
    let at = this.head % this.capacity;
    // back to the buffer's start when the record may not fit before its end, or as soon as the room
    // there, before the oldest record still counted, is as large as what the counted records take
    // (they are all between it and here, written since the last wrap) and this one: the bytes
    // written then stay about twice what those records take, not the whole capacity, and records up
    // to twice as large as those reach them only once they are no longer counted
    const oldest = this.oldestIntact();
    if (at + most > this.capacity || (oldest !== undefined && oldest < at && oldest >= at - oldest + most)) {
      this.head += this.capacity - at;
      at = 0;
    }
    let end = this.bytes.writeUInt32LE(fields.length, at);
    for (const field of fields) {
      const length = this.bytes.write(field, end + 4);
      this.bytes.writeUInt32LE(length, end);
      end += 4 + length;
    }
    this.starts[slot] = this.head;
    this.lengths[slot] = end - at;
    this.head += end - at;
    return seq;
  }

  /** The record pushed as `seq`, while it is kept: among the last `slots` and not written over since. */
  get(seq: number): string[] | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq >= this.pushed || seq < this.pushed - this.slots) return undefined;
    const slot = seq % this.slots;
    const length = this.lengths[slot]!;
    const start = this.starts[slot]!;
    // later records have reached its bytes once the line has moved a whole capacity past its start
    if (length < 0 || this.head - start > this.capacity) return undefined;
    let at = start % this.capacity;
    const fields: string[] = new Array<string>(this.bytes.readUInt32LE(at));
    at += 4;
    for (let i = 0; i < fields.length; i++) {
      const bytes = this.bytes.readUInt32LE(at);
      fields[i] = this.bytes.toString("utf8", at + 4, at + 4 + bytes);
      at += 4 + bytes;
    }
    return fields;
  }

  /** The newest record's sequence number (-1 before the first). */
  newest(): number {
    return this.pushed - 1;
  }

  /** where the oldest record still counted starts in the buffer, if it has not been written over */
  private oldestIntact(): number | undefined {
    const oldest = this.pushed - this.slots;
    if (oldest < 0) return undefined;
    const start = this.starts[oldest % this.slots]!;
    return this.head - start > this.capacity ? undefined : start % this.capacity;
  }
}
