// The gateway examples of docs/operations.md as the shell would run them: `curl -s $URL/v1/...`
// with its -d argument ($SIG spliced in, bodies over several lines). Used by the docs and OpenAPI tests.
import { ANY_SIGNATURE } from "./helpers.js";

export interface Example {
  line: number;
  path: string;
  json: boolean;
  body: string;
}

/** The /v1 curl commands of a page: path, content type and the -d argument as the shell passes it. */
export function readmeExamples(readme: string): Example[] {
  const lines = readme.split("\n");
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^curl -s \$URL(\/v1\/\S+)(.*)$/.exec(lines[i]!);
    if (!m) continue;
    // the -d argument may go on over the next lines until its quote closes
    let command = m[2]!;
    const quoteOf = (text: string) => /-d (['"])/.exec(text)?.[1];
    const closed = (text: string) => {
      const q = quoteOf(text);
      const arg = text.slice(text.indexOf(`-d ${q}`) + 4).replace(/'\$SIG'/g, "");
      return q !== undefined && arg.endsWith(q);
    };
    let j = i;
    while (!closed(command) && j + 1 < lines.length) command += `\n${lines[++j]}`;
    const quote = quoteOf(command)!;
    let arg = command.slice(command.indexOf(`-d ${quote}`) + 4);
    arg = quote === "'" ? arg.slice(0, -1).replace(/'\$SIG'/g, ANY_SIGNATURE) : arg.slice(0, -1).replace(/\$SIG/g, ANY_SIGNATURE);
    out.push({ line: i + 1, path: m[1]!, json: command.includes("content-type: application/json"), body: arg });
  }
  return out;
}
