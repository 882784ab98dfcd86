// `npm start` runs this first, `npm run build` with --always: it compiles (a clean dist/, then
// tsc -p tsconfig.build.json) when dist/ is missing or a source is newer than it (a fresh clone,
// an edit), so a start with a current dist/ does not spend seconds in the compiler. Then esbuild
// bundles dist/main.js with its dependencies into dist/sandgate.js, which `npm start`, `npx
// sandgate` and the Docker image run: one file to read and compile instead of ~400 modules to
// resolve and link, ~100 ms less from spawn to the first answer. dist/main.js and the rest of
// dist/ stay as they are: the library (startSandbox, its types) imports them.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const built = join(root, "dist", "main.js");
const bundle = join(root, "dist", "sandgate.js");
const ctlBundle = join(root, "dist", "ctl.js");

/** The newest modification time under a file or folder, in ms. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, name) => Math.max(latest, newest(join(path, name))), stat.mtimeMs);
}

const always = process.argv.includes("--always");
const sources = ["src", "tsconfig.json", "tsconfig.build.json", "package.json"].map((p) => join(root, p));
if (always || !existsSync(built) || !existsSync(bundle) || !existsSync(ctlBundle) || Math.max(...sources.map(newest)) > statSync(built).mtimeMs) {
  // a first `npm start` would otherwise be silent for the ten seconds the compiler takes
  if (!always) console.error("sandgate: compiling dist/ (first start, or the sources changed): about ten seconds…");
  // built into a fresh folder beside dist/ (what an earlier build left, a renamed module, does not
  // linger) and swapped in whole: a project that links this checkout (npm install ../sandgate)
  // keeps a whole dist/ while a build runs (npm pack, npm test), but for the instant between two renames
  const out = join(root, `dist.building-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json"), "--outDir", out], { stdio: "inherit" });
  const { build } = await import("esbuild");
  // `sandgate ctl` has a bundle of its own: the operator client and its commands, not the server
  // (a CI script may run it dozens of times; bin/sandgate.js picks it for `ctl`)
  writeFileSync(
    join(out, "ctl-entry.js"),
    `import { endWith, quietOnClosedOutput } from "./cli/command.js";\nimport { run } from "./cli/ctl.js";\nquietOnClosedOutput();\nendWith(await run(process.argv.slice(3)));\n`,
  );
  for (const [entry, file] of [
    ["main.js", "sandgate.js"],
    ["ctl-entry.js", "ctl.js"],
  ]) {
    await build({
      entryPoints: [join(out, entry)],
      outfile: join(out, file),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "warning",
      // the CommonJS dependencies inside an ES module still call require (and ids.ts loads faker's locale with it)
      banner: { js: `import { createRequire as __sandgateRequire } from "node:module";\nconst require = __sandgateRequire(import.meta.url);` },
    });
    // esbuild writes strings, regular expressions and identifiers in ASCII (escaped) but keeps
    // comments as they are, and one "—" in a comment makes V8 hold the whole 3 MB source two bytes a
    // character: ~3.5 MB more resident from the start. What is left is in comments, where a \uXXXX is text.
    const text = readFileSync(join(out, file), "utf8");
    const ascii = text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    if (ascii !== text) writeFileSync(join(out, file), ascii);
  }
  const dist = join(root, "dist");
  const old = join(root, `dist.old-${process.pid}`);
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(out, dist);
  rmSync(old, { recursive: true, force: true });
}
