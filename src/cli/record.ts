// `sandgate record --upstream <url> --out <file.har>`: the recording proxy (src/proof/recorder.ts)
// as a command. It serves until SIGINT or SIGTERM, then says how many exchanges the HAR holds.
import { Command, CommanderError } from "commander";
import { stopWithParent } from "./stop-with-parent.js";
import { DEFAULT_RECORDER_PORT, startRecorder } from "../proof/recorder.js";

interface Flags {
  upstream: string;
  out: string;
  port: string;
  host: string;
  notifyTo?: string;
  publicUrl?: string;
}

/** A flag that cannot be used: one line on stderr, exit 2. */
class UsageError extends Error {}

const say = (line: string) => process.stderr.write(`sandgate record: ${line}\n`);

function parse(args: string[]): Flags | number {
  const program = new Command("sandgate record")
    .description("Forward every request to the real gateway's test environment and append each exchange to a HAR 1.2 file")
    .requiredOption("--upstream <url>", "the gateway's base URL (its test environment)")
    .requiredOption("--out <file.har>", "the HAR file to write (overwritten)")
    .option("--port <n>", "port to listen on (0: any free port)", String(DEFAULT_RECORDER_PORT))
    .option("--host <addr>", "address to listen on", "127.0.0.1")
    .option("--notify-to <url>", "relay the gateway's notifications to this merchant URL (and record them)")
    .option("--public-url <url>", "the recorder's address as the gateway reaches it (default: its own URL)")
    .allowExcessArguments(false)
    .exitOverride()
    // commander's own messages span lines: this command says one
    .configureOutput({ writeErr: () => undefined, outputError: () => undefined });
  try {
    program.parse(args, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return 0; // --help
      say(`${err.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ")} (see sandgate record --help)`);
      return 2;
    }
    throw err;
  }
  return program.opts<Flags>();
}

function checkUrl(flag: string, value: string | undefined): void {
  if (value === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) throw new UsageError(`${flag} must be an http or https URL, not "${value}"`);
}

function check(flags: Flags): number {
  checkUrl("--upstream", flags.upstream);
  checkUrl("--notify-to", flags.notifyTo);
  checkUrl("--public-url", flags.publicUrl);
  if (flags.out.trim() === "") throw new UsageError("--out needs a file name");
  if (flags.host.trim() === "") throw new UsageError("--host needs an address");
  const port = Number(flags.port);
  if (!/^\d+$/.test(flags.port) || port > 65535) throw new UsageError(`--port must be a port number (0-65535), not "${flags.port}"`);
  return port;
}

export async function run(args: string[]): Promise<number | undefined> {
  const flags = parse(args);
  if (typeof flags === "number") return flags;
  let port: number;
  try {
    port = check(flags);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    say(err.message);
    return 2;
  }
  let recorder;
  try {
    recorder = await startRecorder({ upstream: flags.upstream, out: flags.out, port, host: flags.host, notifyTo: flags.notifyTo, publicUrl: flags.publicUrl });
  } catch (err) {
    // a port in use, a HAR that cannot be written: said in one line, no stack
    say(err instanceof Error ? err.message : String(err));
    return 1;
  }
  process.stdout.write(`Sandgate recorder listening on ${recorder.url}, forwarding to ${flags.upstream}, writing ${flags.out}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    recorder.close().then(
      () => process.stdout.write(`recorded ${recorder.count()} exchanges to ${flags.out}\n`, () => process.exit(0)),
      (err: unknown) => {
        say(`closing: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // under npx, a signal to npx never reaches this process: it stops when npx is gone
  stopWithParent(stop);
  return undefined;
}
