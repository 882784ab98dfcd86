// sandgate verify: replays a recording, in order, against a fresh in-process Sandgate (or a running
// one), and compares every answer and notification with the recorded one. The path of one
// exchange: prepare the request (replay.ts) → send → learn the ids it issued (id-map.ts) → compare
// (compare.ts). Notifications Sandgate sends meanwhile reach a receiver of verify's own and are
// matched with the recorded ones by event and order.
import { compareAnswers, locationTree, type Answer, type Difference } from "./compare.js";
import { formatOf, readTree } from "./documents.js";
import { HarError, headerOf, kindOf, pathOf, type HarEntry } from "./har.js";
import { IdMap } from "./id-map.js";
import { compareNotifications, startReceiver, type Receiver } from "./notifications.js";
import { cardResolver, prepareRequest } from "./replay.js";
import { GATEWAY_OPERATIONS, operationAt } from "../domain/gateway-operations.js";
import { openTarget, send, type Target } from "./replay-target.js";
import { ignoreMatcher } from "./ignore.js";
import { suggest, type ReplayedRequest } from "./suggest.js";
import type { ExchangeResult, VerifyOptions, VerifyReport } from "../verify-report/verify-report.js";

export type { VerifyOptions, VerifyReport } from "../verify-report/verify-report.js";

export async function verifyEntries(entries: readonly HarEntry[], options: VerifyOptions = {}): Promise<VerifyReport> {
  if (!entries.some((e) => kindOf(e) === "notification" || operationAt(pathOf(e.request.url))))
    throw new HarError(
      `the recording holds no request of this gateway's API (${Object.values(GATEWAY_OPERATIONS)
        .map((o) => o.path)
        .join(", ")}): is it a HAR of another API?`,
    );
  const receiver = await startReceiver();
  // a fresh Sandgate starts at the recording's first moment (see Target.at)
  const first = entries.map((e) => Date.parse(e.startedDateTime)).find(Number.isFinite);
  const target = await openTarget(options, first ?? Date.now());
  try {
    return await replayAll(entries, target, receiver, options);
  } finally {
    await target.close();
    await receiver.close();
  }
}

async function replayAll(entries: readonly HarEntry[], target: Target, receiver: Receiver, options: VerifyOptions): Promise<VerifyReport> {
  const ids = new IdMap();
  const ignored = ignoreMatcher(options.ignore ?? []);
  const cardFor = cardResolver(target.cards);
  const differences: Difference[] = [];
  const exchanges: ExchangeResult[] = [];
  /** Sandgate's notifications, with the exchange after which each arrived */
  const sent: { exchange: number; body: string; contentType: string }[] = [];
  const recordedNotifications: { exchange: number; entry: HarEntry }[] = [];
  const replayCtx = { ids, keyOf: target.keyOf, cardFor, notifyUrl: receiver.url };
  const replayed = new Map<number, ReplayedRequest>();

  for (const [i, entry] of entries.entries()) {
    const exchange = i + 1;
    const kind = kindOf(entry);
    target.at(entry.startedDateTime);
    if (kind === "notification") {
      recordedNotifications.push({ exchange, entry });
      // what time brought before the gateway sent it (a refund settled), Sandgate sends too
      await target.catchUp();
      await target.flush();
      for (const n of receiver.take()) sent.push({ exchange, ...n });
      continue;
    }
    const request = prepareRequest(entry, replayCtx);
    const operation = operationOf(kind, request.path, entry.request.method, request.body);
    const actual = await send(target.base, request);
    const recorded = recordedAnswer(entry);
    if (request.fields) replayed.set(exchange, { operation, fields: request.fields, recorded: recorded.body });
    learn(ids, recorded, actual);
    const found = compareAnswers(recorded, actual, { map: (v) => ids.mapText(v), echoes: request.echoes, ignored });
    differences.push(...found.map((d) => ({ exchange, operation, ...d })));
    exchanges.push({ exchange, kind, operation, method: entry.request.method, path: pathOf(request.path), differences: found.length });
    await target.flush();
    for (const n of receiver.take()) sent.push({ exchange, ...n });
  }

  const compared = recordedNotifications.length > 0;
  if (compared) {
    const results = compareNotifications(recordedNotifications, sent, { map: (v) => ids.mapText(v), ignored });
    differences.push(...results.differences);
    exchanges.push(...results.exchanges);
    exchanges.sort((a, b) => a.exchange - b.exchange);
  }
  differences.sort((a, b) => a.exchange - b.exchange);
  const report: VerifyReport = {
    target: options.against ?? "a fresh Sandgate",
    exchanges,
    notifications: { recorded: recordedNotifications.length, sent: sent.length, compared },
    differences,
  };
  if (options.suggest) report.suggestions = suggest(differences, replayed, options.scenario ?? "default");
  return report;
}

/** "authorise", "apm", "capture", …; "page GET /pay/3ds" for a payer page (its id left out, so pages group). */
function operationOf(kind: "gateway" | "page", path: string, method: string, body: string | undefined): string {
  const p = pathOf(path);
  const op = operationAt(p);
  if (op === "authorise" && body && /"payment_method"|(^|&)payment_method=/.test(body) && !/"(card|token_id)"|(^|&)(card|token_id)=/.test(body)) return "apm";
  if (op) return op;
  const parts = p.split("/").filter(Boolean);
  return `${kind === "gateway" ? "gateway" : "page"} ${method} /${parts.slice(0, 2).join("/")}`;
}

function recordedAnswer(entry: HarEntry): Answer {
  const { response } = entry;
  const raw = response.content.text ?? "";
  const body = response.content.encoding === "base64" ? Buffer.from(raw, "base64").toString("utf8") : raw;
  return {
    status: response.status,
    contentType: headerOf(response.headers, "content-type") ?? response.content.mimeType ?? "",
    body,
    location: response.redirectURL || (headerOf(response.headers, "location") ?? ""),
  };
}

/** What this exchange's answers teach about ids: the body's trees, and a redirect's address. */
function learn(ids: IdMap, recorded: Answer, actual: Answer): void {
  if (recorded.location && actual.location) ids.learn(locationTree(recorded.location), locationTree(actual.location));
  const format = formatOf(recorded.contentType, recorded.body);
  if (format === formatOf(actual.contentType, actual.body)) ids.learn(readTree(format, recorded.body), readTree(format, actual.body));
}
