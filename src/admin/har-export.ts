// The request log as HAR 1.2 (the HTTP Archive format browsers' dev tools and API clients open):
// one entry per logged request, with its body and answer while the log still keeps them (the most
// recent requests: EXCHANGES_KEPT). Request bodies are masked as the log masks them
// (domain/masking.ts maskCardFields): cards and codes in any shape, card numbers in free text.
import qs from "qs";
import { maskCardFields } from "../domain/masking.js";
import { parseText } from "../http/body.js";
import { EXCHANGES_KEPT, type Exchange, type RequestLogEntry } from "../store/request-log.js";

const header = ([name, value]: [string, string]) => ({ name, value });
const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  303: "See Other",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  413: "Payload Too Large",
  422: "Unprocessable Entity",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

/** The request body as it was sent (JSON or a form), with card data masked; {} when it could not be read. */
function postData(x: Exchange) {
  // the log keeps the text of bodies that were read, "" for the others: parsing it again cannot fail
  const masked = maskCardFields(parseText(x.body, x.requestType));
  const json = /json/i.test(x.requestType) || x.requestType === "";
  return { mimeType: x.requestType || "application/json", text: json ? JSON.stringify(masked) : qs.stringify(masked) };
}

function entry(e: RequestLogEntry, x: Exchange | undefined, origin: string) {
  const comment = `${e.id} ${e.operation}: ${e.result}${e.rule ? ` (rule ${e.rule})` : ""}${e.note ? `; ${e.note}` : ""}`;
  const time = x?.duration_ms ?? 0;
  const request = x
    ? {
        method: x.method,
        url: x.url,
        httpVersion: "HTTP/1.1",
        cookies: [],
        headers: x.requestHeaders.map(header),
        queryString: [],
        postData: postData(x),
        headersSize: -1,
        bodySize: -1,
      }
    : { method: "POST", url: `${origin}${e.path}`, httpVersion: "HTTP/1.1", cookies: [], headers: [], queryString: [], headersSize: -1, bodySize: -1 };
  const content = x
    ? { size: Buffer.byteLength(x.responseBody), mimeType: x.responseType, text: x.responseBody }
    : { size: 0, mimeType: "", text: "", comment: `bodies are kept for ${EXCHANGES_KEPT}` };
  return {
    startedDateTime: e.at,
    time,
    request,
    response: {
      status: e.http_status,
      statusText: STATUS_TEXT[e.http_status] ?? "",
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: (x?.responseHeaders ?? []).map(header),
      content,
      redirectURL: "",
      headersSize: -1,
      bodySize: content.size,
    },
    cache: {},
    timings: { send: 0, wait: time, receive: 0 },
    comment,
  };
}

export function harOf(entries: RequestLogEntry[], exchangeOf: (id: string) => Exchange | undefined, origin: string, version: string) {
  return {
    log: {
      version: "1.2",
      creator: { name: "Sandgate", version },
      pages: [],
      entries: entries.map((e) => entry(e, exchangeOf(e.id), origin)),
    },
  };
}
