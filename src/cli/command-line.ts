// Command-line flags (commander) mapped onto the options table of config.ts.
import { Command, Option } from "commander";
import { packageVersion } from "../base/paths.js";
import { DEFAULTS, OPTIONS, resolveConfig, type Config } from "../config/config.js";

/** Parses argv; env fills what the flags leave out; resolveConfig validates both the same way. */
export function parseCommandLine(argv: readonly string[], env: Record<string, string | undefined>): Config {
  const program = new Command("sandgate")
    .description("Sandgate: a sandbox of the card and APM payment gateway")
    .version(packageVersion(), "-v, --version", "print the version and exit")
    .allowExcessArguments(false)
    .showHelpAfterError()
    .addHelpText(
      "after",
      "\nCommands (each with its own --help):\n  sandgate record --upstream <url> --out <file.har>   record the real gateway through a proxy\n  sandgate verify <file.har>                          replay a recording against Sandgate and list the differences\n  sandgate check-receiver <url> --merchant <id>       check a notification receiver with genuine, forged and malformed notifications\n  sandgate listen --url <url> --merchant <id> ...     a shared Sandgate's notifications to a local receiver (--forward-to, --print)\n  sandgate ctl <command> [--url <url>] [--json]       drive a running Sandgate from CI: health, scenario, complete, refund, clock, coverage, ...\n  sandgate state export|import (--data <file> | --redis-url <url>)   a stopped sandbox's state as a file, or back\n  sandgate migrate --redis-url <url> [--dry-run]      bring a sandbox on Redis to this Sandgate's layout, every replica stopped",
    );
  for (const spec of OPTIONS) {
    const label = spec.kind === "boolean" ? spec.flag : `${spec.flag} <value>`;
    const fallback = DEFAULTS[spec.key];
    const shown = fallback === undefined || spec.kind === "boolean" ? "" : ` (default: ${String(fallback)})`;
    const option = new Option(label, `${spec.description}${shown} [env ${spec.env}]`);
    if (spec.choices) option.choices(spec.choices);
    program.addOption(option);
  }
  program.parse([...argv], { from: "user" });
  return resolveConfig(program.opts<Partial<Record<keyof Config, string | boolean>>>(), env);
}
