// Notifications during a replay: verify's own receiver (Sandgate's notify_url while it replays),
// and the comparison with the recorded ones, matched by event and order (or a payout's request id),
// a duplicate counted once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { compareAnswers, type Answer, type Difference, type Found } from "./compare.js";
import { formatOf } from "./documents.js";
import { headerOf, pathOf, postText, type HarEntry } from "./har.js";
import type { ExchangeResult } from "../verify-report/verify-report.js";

interface NotificationKey {
  id: string;
  key: string;
  event: string;
}

/** A notification's id (for duplicates), and what matches it across the two sides: its event and order. */
function notificationKey(body: string, contentType: string, map: (v: string) => string): NotificationKey {
  const fields = fieldsOf(body, contentType);
  const data = (fields.data !== null && typeof fields.data === "object" ? fields.data : {}) as Record<string, unknown>;
  const order = String(data.order_no ?? data.request_id ?? data.recurring_id ?? fields.order_no ?? "");
  const event = String(fields.event ?? "");
  return { id: String(fields.notification_id ?? body), key: `${event}|${map(order)}`, event };
}

/** A JSON or form body's top-level fields; {} when it is neither. */
function fieldsOf(body: string, contentType: string): Record<string, unknown> {
  try {
    const format = formatOf(contentType, body);
    const value: unknown = format === "json" ? JSON.parse(body) : format === "form" ? Object.fromEntries(new URLSearchParams(body)) : {};
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function compareNotifications(
  recorded: { exchange: number; entry: HarEntry }[],
  sent: { exchange: number; body: string; contentType: string }[],
  ctx: { map(v: string): string; ignored(path: string): boolean },
): { differences: Difference[]; exchanges: ExchangeResult[] } {
  const differences: Difference[] = [];
  const exchanges: ExchangeResult[] = [];
  const firstOf = <T extends { k: NotificationKey }>(list: T[]) => list.filter((n, i) => list.findIndex((m) => m.k.id === n.k.id) === i);
  const ours = firstOf(sent.map((n) => ({ ...n, k: notificationKey(n.body, n.contentType, (v) => v) })));
  const theirs = firstOf(
    recorded.map(({ exchange, entry }) => {
      const body = postText(entry) ?? "";
      const contentType = headerOf(entry.request.headers, "content-type") ?? entry.request.postData?.mimeType ?? "";
      return { exchange, entry, body, contentType, k: notificationKey(body, contentType, ctx.map) };
    }),
  );
  const used = new Set<number>();
  for (const r of theirs) {
    const operation = `notification ${r.k.event || "(no event)"}`;
    const match = ours.findIndex((o, i) => !used.has(i) && o.k.key === r.k.key);
    let found: Found[];
    if (match < 0) {
      found = [{ path: "notification", kind: "missing", expected: `${r.k.event} for ${r.k.key.split("|")[1] || "(no order)"}`, actual: "(not sent)" }];
    } else {
      used.add(match);
      const o = ours[match]!;
      const answer = (body: string, contentType: string): Answer => ({ status: 200, contentType, body, location: "" });
      found = compareAnswers(answer(r.body, r.contentType), answer(o.body, o.contentType), { map: ctx.map, echoes: new Map(), ignored: ctx.ignored });
    }
    differences.push(...found.map((d) => ({ exchange: r.exchange, operation, ...d })));
    exchanges.push({
      exchange: r.exchange,
      kind: "notification",
      operation,
      method: r.entry.request.method,
      path: pathOf(r.entry.request.url),
      differences: found.length,
    });
  }
  ours.forEach((o, i) => {
    if (used.has(i)) return;
    differences.push({
      exchange: o.exchange,
      operation: `notification ${o.k.event}`,
      path: "notification",
      kind: "extra",
      expected: "(not recorded)",
      actual: `${o.k.event} for ${o.k.key.split("|")[1] || "(no order)"}`,
    });
    const at = exchanges.find((x) => x.exchange === o.exchange);
    if (at) at.differences++;
  });
  return { differences, exchanges };
}

export interface Receiver {
  url: string;
  take(): { body: string; contentType: string }[];
  close(): Promise<void>;
}

/** Where Sandgate's notifications go during the replay: answers 200 "ok" and keeps them. */
export async function startReceiver(): Promise<Receiver> {
  let got: { body: string; contentType: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      got.push({ body: Buffer.concat(chunks).toString("utf8"), contentType: req.headers["content-type"] ?? "" });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/notifications`,
    take: () => {
      const out = got;
      got = [];
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // the notifier's kept-alive connections would hold the close for seconds
        server.closeAllConnections();
      }),
  };
}
