// `sandgate ctl <command>`: the operator API (/__sandbox) from a shell, for CI in any language.
// The command line is built from the table in ctl-commands.ts; this file reads the shared flags
// (--url | SANDGATE_URL, --token | ADMIN_TOKEN, --json, --timeout), runs the chosen command and
// prints its answer: text by default, one JSON document on stdout with --json.
// Exit 0: done; 1: the check failed (health --wait ran out of time, coverage under --fail-under);
// 2: bad usage or bad input, nothing was sent; 3: the sandbox answered an error, did not answer in
// time or cannot be reached. Errors are one line on stderr, never a stack trace.
import { Command, CommanderError, Option } from "commander";
import { nodeHttpTransport } from "./http-transport.js";
import { createAdminClient } from "../api/client.js";
import { COMMANDS, GROUPS } from "./ctl-commands.js";
import { durationMs, type CommandSpec, type Context } from "./ctl-runs.js";
import { failureOf, oneLine, Refused } from "./ctl-errors.js";

export const EXIT = { ok: 0, failed: 1, usage: 2, sandbox: 3 } as const;

const DEFAULT_URL = "http://127.0.0.1:8080";
const DEFAULT_TIMEOUT = "60s";

interface Common {
  url?: string;
  token?: string;
  json?: boolean;
  timeout?: string;
}

/** Recognised before the command (`ctl --url U health`) and after it (`ctl health --url U`). */
const commonOptions = () => [
  new Option("--url <url>", `the Sandgate (default: env SANDGATE_URL, else ${DEFAULT_URL})`),
  new Option("--token <token>", "its ADMIN_TOKEN (default: env ADMIN_TOKEN)"),
  new Option("--json", "print one JSON document on stdout instead of text"),
  new Option("--timeout <duration>", `give up on a call without an answer after this long (default ${DEFAULT_TIMEOUT})`),
];

const HELP_AFTER = `
Exit codes: 0 done; 1 the check failed (health --wait timed out, coverage under --fail-under);
2 bad usage or input (nothing was sent); 3 the sandbox answered an error or cannot be reached.
Reference: docs/ctl.md`;

function program(picked: (spec: CommandSpec, command: Command) => void): Command {
  const root = new Command("sandgate ctl")
    .description("drive a running Sandgate from a shell or CI job: scenarios, payer pages, refunds, the clock, notifications, coverage")
    .exitOverride()
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      writeOut: (s) => process.stdout.write(s),
      // commander's "error: ..." in the same shape as ours
      outputError: (s, write) => write(`sandgate ctl: ${s.replace(/^error: /, "")}`),
    })
    .addHelpText("after", HELP_AFTER);
  for (const option of commonOptions()) root.addOption(option);
  for (const spec of COMMANDS) {
    const words = spec.words.split(" ");
    let parent = root;
    for (const word of words.slice(0, -1)) parent = parent.commands.find((c) => c.name() === word) ?? parent.command(word).description(GROUPS[word] ?? "");
    const leaf = parent.command(words.at(-1)!).description(spec.summary);
    for (const argument of spec.args ?? []) leaf.addArgument(argument);
    for (const option of [...(spec.options ?? []), ...commonOptions()]) leaf.addOption(option);
    leaf.action((...params: unknown[]) => picked(spec, params.at(-1) as Command));
  }
  return root;
}

/** The client and what messages name, from the shared flags and the environment. */
function contextOf(flags: Common): Context {
  const fromEnv = flags.url === undefined && !!process.env.SANDGATE_URL;
  const url = (flags.url ?? (process.env.SANDGATE_URL || DEFAULT_URL)).replace(/\/+$/, "");
  if (!/^https?:\/\/\S+$/i.test(url) || !URL.canParse(url)) throw new Refused(`${fromEnv ? "SANDGATE_URL" : "--url"} must be an http(s) URL, got "${url}"`);
  const token = flags.token || process.env.ADMIN_TOKEN || undefined;
  const timeout = flags.timeout ?? DEFAULT_TIMEOUT;
  return { client: createAdminClient(url, token, { timeoutMs: durationMs(timeout, "--timeout"), transport: nodeHttpTransport }), url, token, timeout };
}

const say = (line: string) => process.stderr.write(`sandgate ctl: ${oneLine(line)}\n`);

export async function run(args: string[]): Promise<number> {
  let chosen: { spec: CommandSpec; command: Command } | undefined;
  try {
    program((spec, command) => (chosen = { spec, command })).parse(args, { from: "user" });
  } catch (err) {
    // commander said what was wrong (or printed the help asked for)
    return err instanceof CommanderError && err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (!chosen) return EXIT.usage;
  const { spec, command } = chosen;
  const flags = command.optsWithGlobals<Common & Record<string, string | boolean | undefined>>();
  let ctx: Context | undefined;
  try {
    ctx = contextOf(flags);
    const answer = await spec.run(ctx, command.processedArgs as string[], flags);
    const shown = flags.json ? JSON.stringify(answer.json, null, 2) : answer.text;
    if (shown) process.stdout.write(`${shown}\n`);
    if (answer.failed === undefined) return EXIT.ok;
    say(answer.failed);
    return EXIT.failed;
  } catch (err) {
    if (err instanceof Refused) {
      say(err.message);
      return EXIT.usage;
    }
    const failure = ctx ? failureOf(err, ctx.url, ctx.token !== undefined, ctx.timeout) : { error: "failed", status: 0, message: String(err) };
    if (flags.json) process.stdout.write(`${JSON.stringify(failure, null, 2)}\n`);
    say(failure.message);
    return EXIT.sandbox;
  }
}
