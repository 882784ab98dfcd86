// `sandgate listen` on the server's side: the listeners connected to this process, by merchant, and
// the attempts handed to them. While a merchant has a listener (connected, or gone less than
// its grace period (listenGraceMs) ago: a dropped connection is coming back), the dispatcher does not POST its notifications
// to their notify_url: it offers each attempt here, the listener delivers it to its local receiver
// and reports the receiver's answer, and that answer is the attempt. An offer is sent to every
// listener of the merchant that is connected, and again to each one that connects while it waits
// (after a dropped connection nothing is lost); the first report is the answer (a listener that gets
// an offer twice answers from what it did the first time, so nothing is delivered twice). An offer
// nobody answers within its wait is a failed attempt, retried as any other. A listener that stops
// says goodbye (leave): no grace period follows it.
//
// With replicas (a shared store's crosstalk), a listener is held by the replica it connected to, and
// its answers may reach any replica. Each replica marks the merchants it holds listeners of, so every
// replica knows a merchant is listened to; an offer is told to every other replica as well (each
// sends it to the listeners it holds), and waits where it was made; an answer for an offer that
// does not wait here is told on, and recorded by the replica where it waits; a listener that
// connects is told on too, so the replicas where its merchant's offers wait tell them again.
import { randomBytes, randomUUID } from "node:crypto";
import type { AttemptOutcome } from "../domain/types.js";
import type { Crosstalk } from "../store/store.js";
import { timing } from "../config/timings.js";

/** One attempt of a notification, as a listener delivers it: the request a direct POST would make. */
export interface ListenOffer {
  /** `<notification_id>.<attempt>`: what the listener keeps to deliver it once */
  id: string;
  notification_id: string;
  attempt: number;
  event: string;
  /** the notify_url the merchant gave (the listener delivers to its own --forward-to instead) */
  url: string;
  headers: Record<string, string>;
  /** the body exactly as sent, signature included */
  body: string;
  /** how long the receiver has to answer */
  timeout_ms: number;
}

/** What a listener reports of its receiver's answer. */
export interface ListenReport {
  /** null: no HTTP answer (refused, timed out), or --print without --forward-to */
  http_status: number | null;
  /** why no answer came, or "" */
  error: string;
  duration_ms: number;
  response_body: string;
  /** with no HTTP answer, its system code (ECONNREFUSED, timeout), as a direct POST's outcome has it */
  code?: string | undefined;
}

/** A listener's stream: what the hub writes offers to. */
export interface ListenerStream {
  send(offer: ListenOffer): void;
  /** ends the stream (the process is stopping) */
  end(): void;
}

export interface Listeners {
  /** The merchant has a listener: connected, or gone less than its grace period (listenGraceMs) ago. */
  has(merchant: string): boolean;
  /**
   * Adds a stream for the merchant and sends it what waits: its id (what the listener names when it
   * leaves) and its close(), for when its connection ends; the refusal when the caps are reached.
   */
  connect(merchant: string, stream: ListenerStream): { id: string; close(): void } | { refused: string };
  /**
   * A listener's goodbye: its stream ends, and when it was the merchant's last there is no grace
   * period (the merchant's notifications go to their notify_url at once). False when the merchant
   * has no listener of that id here (with replicas, the one that holds it is told).
   */
  leave(merchant: string, id: string): boolean;
  /** Offers an attempt to the merchant's listeners; resolves with the first report, or a failure after `waitMs`. */
  offer(merchant: string, offer: ListenOffer, waitMs: number): Promise<AttemptOutcome>;
  /** The report of an offer: false when none of that id waits for the merchant, here or on another replica (answered already, too late, unknown). */
  answer(merchant: string, offerId: string, report: ListenReport): Promise<boolean>;
  /** How many listeners each merchant has connected now (for the operator's view). */
  connected(): Record<string, number>;
  /** Ends every stream and fails every waiting offer (the process is stopping). */
  close(): void;
}

/** listeners one merchant may have at once (each gets every offer), and one process */
export const MAX_PER_MERCHANT = 4;
export const MAX_LISTENERS = 256;
const RESPONSE_CHARS = 500;
const ERROR_CHARS = 300;
/** how long an answer told to the other replicas waits to hear that one of them recorded it */
const TOLD_ANSWER_MS = 2_000;

/** What replicas tell each other of listeners (the crosstalk's messages). */
type Word =
  | { t: "offer"; merchant: string; offer: ListenOffer }
  | { t: "answer"; merchant: string; id: string; report: ListenReport; ask: string }
  | { t: "recorded"; ask: string }
  | { t: "connected"; merchant: string }
  | { t: "leave"; merchant: string; id: string };

interface Connected {
  stream: ListenerStream;
  /** takes it off the merchant's listeners, with the grace period or (leaving) without */
  gone(leaving: boolean): void;
}

interface Waiting {
  offer: ListenOffer;
  done(outcome: AttemptOutcome): void;
}

/** The outcome of an attempt from a listener's report: a 2xx delivers, anything else is retried. */
export function outcomeOf(report: ListenReport): AttemptOutcome {
  const { http_status, duration_ms } = report;
  const response_body = report.response_body.slice(0, RESPONSE_CHARS);
  if (http_status === null) {
    const error = report.error.slice(0, ERROR_CHARS);
    // no status and no error: --print alone, which acknowledges what it printed
    return {
      http_status,
      error: error && `through sandgate listen: ${error}`,
      duration_ms,
      response_body,
      retryable: true,
      ...(report.code ? { code: report.code } : {}),
    };
  }
  const ok = http_status >= 200 && http_status < 300;
  return { http_status, error: ok ? "" : `the receiver answered HTTP ${http_status} (a 2xx acknowledges)`, duration_ms, response_body, retryable: true };
}

/** `crosstalk`: the shared store's, with replicas (each replica's hub then works with the others'). */
export function createListeners(options: { now?: () => number; crosstalk?: Crosstalk | undefined } = {}): Listeners {
  const now = options.now ?? Date.now;
  const cross = options.crosstalk;
  /** by merchant: each connected listener's stream and how it goes, by its id */
  const streams = new Map<string, Map<string, Connected>>();
  /** when each merchant's last listener went */
  const goneAt = new Map<string, number>();
  const waiting = new Map<string, Map<string, Waiting>>();
  let total = 0;

  const waitingOf = (merchant: string) => {
    let mine = waiting.get(merchant);
    if (!mine) waiting.set(merchant, (mine = new Map()));
    return mine;
  };
  const settle = (merchant: string, id: string, outcome: AttemptOutcome) => {
    const mine = waiting.get(merchant);
    const w = mine?.get(id);
    if (!mine || !w) return false;
    mine.delete(id);
    if (mine.size === 0) waiting.delete(merchant);
    w.done(outcome);
    return true;
  };
  /** the merchant has a listener here: connected, or gone less than its grace period (listenGraceMs) ago */
  const holds = (merchant: string) => {
    if (streams.get(merchant)?.size) return true;
    const gone = goneAt.get(merchant);
    if (gone === undefined) return false;
    if (now() - gone < timing("listenGraceMs")) return true;
    goneAt.delete(merchant);
    return false;
  };
  const sendHere = (merchant: string, offer: ListenOffer) => {
    for (const { stream } of streams.get(merchant)?.values() ?? []) stream.send(offer);
  };
  const tell = (word: Word) => cross?.tell(word);
  /** answers told to the other replicas, waiting to hear one recorded them */
  const asked = new Map<string, (recorded: boolean) => void>();

  /** a goodbye for a listener held here: its stream ends, with no grace period after it */
  const leaveHere = (merchant: string, id: string): boolean => {
    const listener = streams.get(merchant)?.get(id);
    if (!listener) return false;
    listener.gone(true);
    listener.stream.end();
    marks?.now();
    return true;
  };

  const marks = cross?.mark(() => [...new Set([...streams.keys(), ...goneAt.keys()])].filter(holds));
  cross?.hear((said) => {
    const word = said as Word;
    if (word.t === "offer") sendHere(word.merchant, word.offer);
    else if (word.t === "answer") {
      if (settle(word.merchant, word.id, outcomeOf(word.report))) tell({ t: "recorded", ask: word.ask });
    } else if (word.t === "recorded") asked.get(word.ask)?.(true);
    else if (word.t === "connected") {
      for (const w of waiting.get(word.merchant)?.values() ?? []) tell({ t: "offer", merchant: word.merchant, offer: w.offer });
    } else if (word.t === "leave") leaveHere(word.merchant, word.id);
  });

  return {
    // another replica's listener: its marks say so, on the same channel and at once when it connects or leaves
    has: (merchant) => holds(merchant) || cross?.markedElsewhere(merchant) === true,
    connect(merchant, stream) {
      const mine = streams.get(merchant) ?? new Map<string, Connected>();
      if (mine.size >= MAX_PER_MERCHANT) return { refused: `merchant ${merchant} has ${MAX_PER_MERCHANT} listeners connected already, the most it may have` };
      if (total >= MAX_LISTENERS) return { refused: `this Sandgate has ${MAX_LISTENERS} listeners connected, the most it takes` };
      const id = `lst_${randomBytes(12).toString("hex")}`;
      let open = true;
      /** leaving: said goodbye, so no grace period follows it */
      const gone = (leaving: boolean) => {
        if (!open) return;
        open = false;
        total--;
        mine.delete(id);
        if (mine.size === 0) {
          streams.delete(merchant);
          if (leaving) goneAt.delete(merchant);
          else goneAt.set(merchant, now());
        }
      };
      mine.set(id, { stream, gone });
      streams.set(merchant, mine);
      goneAt.delete(merchant);
      total++;
      for (const w of waiting.get(merchant)?.values() ?? []) stream.send(w.offer);
      marks?.now();
      tell({ t: "connected", merchant });
      return { id, close: () => gone(false) };
    },
    leave(merchant, id) {
      if (leaveHere(merchant, id)) return true;
      // held by another replica, perhaps: it ends it when told
      tell({ t: "leave", merchant, id });
      return false;
    },
    offer(merchant, offer, waitMs) {
      return new Promise<AttemptOutcome>((resolve) => {
        const started = now();
        const timer = setTimeout(() => {
          const connected = streams.get(merchant)?.size || cross?.markedElsewhere(merchant);
          const error = `no answer through sandgate listen within ${waitMs / 1000} s (the listener was ${connected ? "connected" : "not connected"})`;
          settle(merchant, offer.id, { http_status: null, error, duration_ms: now() - started, response_body: "", retryable: true, code: "timeout" });
        }, waitMs);
        timer.unref();
        waitingOf(merchant).set(offer.id, {
          offer,
          done: (outcome) => {
            clearTimeout(timer);
            resolve(outcome);
          },
        });
        sendHere(merchant, offer);
        tell({ t: "offer", merchant, offer });
      });
    },
    async answer(merchant, offerId, report) {
      if (settle(merchant, offerId, outcomeOf(report))) return true;
      if (!cross) return false;
      // it may wait on the replica that made it
      const ask = randomUUID();
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => done(false), TOLD_ANSWER_MS);
        const done = (recorded: boolean) => {
          clearTimeout(timer);
          asked.delete(ask);
          resolve(recorded);
        };
        asked.set(ask, done);
        tell({ t: "answer", merchant, id: offerId, report, ask });
      });
    },
    connected: () => Object.fromEntries([...streams].map(([merchant, set]) => [merchant, set.size])),
    close() {
      marks?.stop();
      // each stream's own close() follows when its connection ends
      for (const mine of [...streams.values()]) for (const { stream } of [...mine.values()]) stream.end();
      for (const [merchant, mine] of [...waiting]) {
        for (const id of [...mine.keys()]) {
          settle(merchant, id, {
            http_status: null,
            error: "Sandgate stopped before the listener answered",
            duration_ms: 0,
            response_body: "",
            retryable: true,
          });
        }
      }
    },
  };
}
