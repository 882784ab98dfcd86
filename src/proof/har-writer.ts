// A HAR 1.2 file written in place as a recording goes: after every append the file on disk is a
// complete document (head, entries, then the closing trailer), so a recorder killed at any moment
// leaves a file verify can read. Each entry is written over the trailer, followed by the trailer.
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { EntryKind } from "./har.js";

export interface NameValue {
  name: string;
  value: string;
}

/** One exchange as the recorder writes it (the HAR 1.2 fields, plus Sandgate's `_sandgate`). */
export interface RecordedEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: NameValue[];
    headers: NameValue[];
    queryString: NameValue[];
    postData?: { mimeType: string; text: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: NameValue[];
    headers: NameValue[];
    content: { size: number; mimeType: string; text: string; encoding?: "base64" };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  _sandgate: { kind: EntryKind };
}

export interface HarWriter {
  readonly path: string;
  /** Writes the entry; the file is a complete HAR again when this returns. Ignored once closed. */
  append(entry: RecordedEntry): void;
  count(): number;
  close(): void;
}

const TRAILER = "\n]}}\n";

/** Creates (or empties) the file and its folders, and writes an empty HAR. Throws when it cannot. */
export function openHarWriter(path: string, creator: { name: string; version: string }): HarWriter {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, "w");
  const head = `{"log":{"version":"1.2","creator":${JSON.stringify(creator)},"pages":[],"entries":[`;
  let position = 0;
  let entries = 0;
  let closed = false;
  const writeAt = (text: string, at: number) => {
    const bytes = Buffer.from(text, "utf8");
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, at + done);
    return bytes.length;
  };
  position = writeAt(head, 0);
  writeAt(TRAILER, position);
  return {
    path,
    append(entry) {
      if (closed) return;
      // every entry only lengthens the file: the new text always covers the old trailer
      position += writeAt(`${entries === 0 ? "" : ","}\n${JSON.stringify(entry)}${TRAILER}`, position) - TRAILER.length;
      entries++;
    },
    count: () => entries,
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}
