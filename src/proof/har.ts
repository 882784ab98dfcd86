// HAR 1.2 (the HTTP Archive format of browsers' dev tools and API clients), as the recorder writes it
// and verify reads it. Sandgate's own fields carry the HAR convention's leading underscore:
// `_sandgate.kind` says what an entry is (a gateway operation, a payer page, or a notification the
// gateway sent), which verify would otherwise have to guess from the path.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { GATEWAY_PREFIX } from "../domain/gateway-operations.js";

export type EntryKind = "gateway" | "page" | "notification";

const header = z.object({ name: z.string(), value: z.string() });
export type HarHeader = z.infer<typeof header>;

const entrySchema = z.object({
  startedDateTime: z.string(),
  time: z.number(),
  request: z.object({
    method: z.string().min(1),
    url: z.string().min(1),
    httpVersion: z.string().optional(),
    headers: z.array(header),
    queryString: z.array(header).optional(),
    postData: z
      .object({ mimeType: z.string(), text: z.string().optional(), params: z.array(z.object({ name: z.string(), value: z.string().optional() })).optional() })
      .optional(),
  }),
  response: z.object({
    status: z.number().int(),
    statusText: z.string().optional(),
    headers: z.array(header),
    content: z.object({ size: z.number().optional(), mimeType: z.string().optional(), text: z.string().optional(), encoding: z.string().optional() }),
    redirectURL: z.string().optional(),
  }),
  comment: z.string().optional(),
  _sandgate: z.object({ kind: z.enum(["gateway", "page", "notification"]) }).optional(),
});
export type HarEntry = z.infer<typeof entrySchema>;

const harSchema = z.object({
  log: z.object({
    version: z.string().optional(),
    creator: z.object({ name: z.string(), version: z.string().optional() }).optional(),
    entries: z.array(entrySchema),
  }),
});

/** A HAR that cannot be used: not readable, not JSON, not HAR, or not of this gateway. verify exits 2. */
export class HarError extends Error {
  override name = "HarError";
}

/** The entries of a HAR document's text; a HarError that says what is wrong and where. */
export function parseHar(text: string, source = "the HAR"): HarEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const cut =
      text.trim() === ""
        ? "it is empty"
        : `it is not JSON (${(err as Error).message}); a recording cut off while it was written ends without its closing "]}}"`;
    throw new HarError(`${source}: ${cut}`);
  }
  const parsed = harSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length ? issue.path.join(".") : "the top level";
    throw new HarError(`${source}: not a HAR 1.2 document: ${where}: ${issue.message}`);
  }
  return parsed.data.log.entries;
}

export function readHar(path: string): HarEntry[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new HarError(`${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseHar(text, path);
}

/** What an entry is: its own `_sandgate.kind`, else a /v1 path is a gateway operation, anything else a page. */
export function kindOf(entry: HarEntry): EntryKind {
  if (entry._sandgate) return entry._sandgate.kind;
  return pathOf(entry.request.url).startsWith(GATEWAY_PREFIX) ? "gateway" : "page";
}

/** The path of a URL (absolute or not), without query. */
export function pathOf(url: string): string {
  try {
    return new URL(url, "http://x").pathname;
  } catch {
    return url.split("?")[0] ?? url;
  }
}

export const headerOf = (headers: readonly HarHeader[], name: string): string | undefined =>
  headers.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value;

/** A request's body: its text, or (as browsers export a form) its params as a form. */
export function postText(entry: HarEntry): string | undefined {
  const data = entry.request.postData;
  if (!data) return undefined;
  if (data.text !== undefined) return data.text;
  return data.params && new URLSearchParams(data.params.map((p): [string, string] => [p.name, p.value ?? ""])).toString();
}
