// The hostile recording of `npm run bench:hostile-verify` and the bench's "hostile-verify" promise:
// Sandgate's own HAR export of one approved payment, and the same with its answer turned into an
// HTML page that opens 3.4 million <form> tags and closes none (20 MB).

/** The HAR of the last exchange on the Sandgate at `url` (pay something first), as is and made hostile. */
export async function hostileRecordings(url: string): Promise<{ normal: string; hostile: string }> {
  const har = (await (await fetch(`${url}/__sandbox/requests.har?limit=1`)).json()) as {
    log: { entries: { response: { content: Record<string, unknown> } }[] };
  };
  const normal = JSON.stringify(har);
  const content = har.log.entries[0]!.response.content;
  content.mimeType = "text/html; charset=utf-8";
  content.text = "<form>".repeat(3_400_000);
  content.size = (content.text as string).length;
  return { normal, hostile: JSON.stringify(har) };
}
