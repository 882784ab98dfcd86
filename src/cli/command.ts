// What the commands run by `sandgate <command>` (verify, check-receiver, state, migrate) share: a
// commander program whose errors and --help end in an exit code, not in process.exit.
import { Command, CommanderError, type OptionValues } from "commander";

export function command(name: string, description: string): Command {
  return new Command(name)
    .description(description)
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });
}

/** The program's flags (and program.args), or the exit code: 0 after --help, 2 for what it cannot take (commander said why). */
export function parseFlags<T extends OptionValues>(program: Command, args: string[]): T | number {
  try {
    program.parse(args, { from: "user" });
    return program.opts<T>();
  } catch (err) {
    return err instanceof CommanderError && err.exitCode === 0 ? 0 : 2;
  }
}

/**
 * `sandgate ctl … | head`: a reader that stops early ends the command quietly, as it would a Unix
 * tool (Node ignores SIGPIPE and would throw EPIPE with a stack trace).
 */
export function quietOnClosedOutput(): void {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(process.exitCode ?? 0);
  });
}

/**
 * A command's end: its exit code once what it wrote is flushed, without waiting for the HTTP
 * client's idle keep-alive socket to close (~100 ms a `ctl` call otherwise).
 */
export function endWith(code: number): void {
  process.exitCode = code;
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}
