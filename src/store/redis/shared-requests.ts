// The request log across replicas: each replica's entries go to one Redis stream (capped at what a
// log keeps), and each replica takes the others' from it, in order, into its own log. An entry is
// skipped unread when it is this replica's own (its ids carry the replica's tag) or came twice (a
// reply lost and the entry sent again).
import type { Link } from "./redis-link.js";
import { REQUEST_LOG_CAPACITY, type Exchange, type RequestLog, type RequestLogEntry } from "../request-log.js";

export interface SharedRequests {
  /** the other replicas' entries since the last take, into `log` */
  take(log: RequestLog): Promise<void>;
  /** this replica's entry, to the others (sent on the connection before the answer goes out) */
  publish(entry: RequestLogEntry, exchange: Exchange | undefined): void;
}

/** `stream`: the stream's key; `tag`: this replica's, in the ids of its own requests. */
export function sharedRequests({ client, again }: Link, stream: string, tag: string): SharedRequests {
  /** the id of the last stream entry taken, and the requests' own ids lately taken */
  let last = "";
  const taken = new Set<string>();
  const skipped = (requestId: string) => requestId.startsWith(`req-${tag}-`) || taken.has(requestId);
  return {
    async take(log) {
      const logged = await again(() => client.xrange(stream, last === "" ? "-" : `(${last}`, "+"));
      for (const [id, fields] of logged) {
        last = id;
        // the request's id beside its entry (field i): an entry skipped is never parsed (a batch's
        // entry and exchange run to tens of KB); an earlier Sandgate's entry has d alone
        if (fields[2] === "i" && skipped(fields[3]!)) continue;
        const { entry, exchange } = JSON.parse(fields[1]!) as { entry: RequestLogEntry; exchange?: Exchange };
        if (skipped(entry.id)) continue;
        taken.add(entry.id);
        if (taken.size > REQUEST_LOG_CAPACITY) taken.delete(taken.values().next().value!);
        log.addShared(entry, exchange);
      }
    },
    // The request's body was masked when it was logged (http/operation.ts): no card number or
    // security code reaches Redis.
    publish(entry, exchange) {
      const d = JSON.stringify({ entry, exchange });
      // d first: a replica of an earlier Sandgate reads the second value as the entry
      again(() => client.xadd(stream, "MAXLEN", "~", String(REQUEST_LOG_CAPACITY), "*", "d", d, "i", entry.id)).catch(() => undefined);
    },
  };
}
