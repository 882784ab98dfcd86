// The reference blocks of docs/ that are not a script to run top to bottom, each run or checked
// against the real thing, found by what it holds (never by its line):
// - docs/layout.md, the tree of files: every path it names exists (build output: the build names it);
// - docs/benchmark.md, the `npm run bench…` lines: each npm script exists and its program accepts
//   every flag shown (asked of the program itself, stopped before it measures anything);
// - docs/ci.md, the docker compose and GitHub Actions YAML: their Sandgate settings, port, health
//   check and health URL, against src/config/config.ts, the Dockerfile and a started Sandgate. Neither can
//   run here (no Docker registry or daemon, no Actions runner), so what they rely on is checked, and
//   the health commands they run are run against a Sandgate on this machine;
// - docs/scenarios.md, the coverage lines: the two curl calls against a listening Sandgate after a
//   payment of CI-JOB-42, compared with the JSON shown after them, and `--coverage-report` in a
//   merchant's project (doc-project.ts), stopped with SIGTERM;
// - docs/notifications.md, the `sandgate check-receiver` lines, run in a merchant's project against a
//   receiver built here from the page's own description of the signature.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { convert } from "xmlbuilder2";
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { freePort } from "../scripts/redis-server.js";
import { PROMISES } from "../scripts/bench/promises.js";
import { OPTIONS, resolveConfig } from "../src/config/config.js";
import { startSandbox, type Sandbox } from "../src/server/sandbox.js";
import { ROOT, blockHolding, docPages, fencedBlocks, prose } from "./docs-helpers.js";
import { docProject, untilHealthy, withPorts, type DocProject, type ScriptRun } from "./doc-project.js";
import { ACME, directPayment, parseXml, textOf } from "./helpers.js";

const pages = docPages();
const page = (path: string) => pages.find((p) => p.path === path)!;

const block = blockHolding;

/** A block's command lines: comments (whole-line and trailing) and blank lines dropped. */
const commandLines = (text: string) =>
  text
    .split("\n")
    .map((l) => l.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);

const readText = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** A direct payment (POST /v1/authorise) of the merchant; its order_status ("1": approved). */
async function pay(url: string, merchantId: string): Promise<string> {
  const res = await fetch(`${url}/v1/authorise`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(directPayment({ merchant_id: merchantId, account_id: "ACC-1" })),
  });
  return textOf(parseXml(await res.text()).order_status);
}

interface Background {
  url: string;
  /** SIGTERM to the command and what it started, then the script's end */
  stop(): Promise<ScriptRun>;
}

/**
 * `command` (an `npx sandgate …` line) in the background of a project's script, with PORT set; resolves
 * once it answers /__sandbox/health. The script waits for a file the test writes, then sends SIGTERM
 * and waits for the command to end.
 */
async function inBackground(project: DocProject, command: string, port: number): Promise<Background> {
  const stopFile = `.stop-${port}`;
  // SIGTERM to every process of the job (npx and the Sandgate it started), as a CI runner's stop sends it; the script ignores it
  const script = `${command} &\npid=$!\nuntil [ -e ${stopFile} ]; do sleep 0.1; done\ntrap '' TERM\nkill -TERM 0\nwait $pid\necho "command exit $?"\n`;
  const run = project.run(script, { env: { PORT: String(port) }, timeoutMs: 240_000 });
  const stop = () => {
    writeFileSync(join(project.dir, stopFile), "");
    return run;
  };
  try {
    await untilHealthy(port, run);
  } catch (err) {
    await stop();
    throw new Error(`${command}: ${(err as Error).message}`);
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}

let project: DocProject;
beforeAll(() => {
  project = docProject();
});
afterAll(() => project.close());

// ---------------------------------------------------------------------------------------------
describe("docs/layout.md", () => {
  const FILE_ENDINGS = /\.(ts|mjs|js|json|har|md|ya?ml)$/;
  const PATH_SHAPE = /^\.?[\w-]+(\.[\w-]+)*(\/[\w.-]+)*\/?$/;
  /** a token that names a file or folder: a path with a slash, a file name with an ending, a *file (Dockerfile) */
  const isPath = (t: string) => PATH_SHAPE.test(t) && (t.includes("/") || FILE_ENDINGS.test(t) || /^[A-Z]\w*file$/.test(t));
  /** a cell of the tree that is only names ("src/config/config.ts, cli.ts"): an entry, not a description */
  const isNameCell = (cell: string) => cell.split(/,\s*/).every(isPath);
  const folderOf = (entry: string) => (entry.endsWith("/") ? entry : `${dirname(entry)}/`);

  interface Named {
    name: string;
    /** the entry whose line names it: a bare name is looked for in its folder first */
    entry: string;
    /** no ending ("test/xml-render", a "bench/: processes, run" list's names): a file whose name starts with it will do */
    stem?: boolean;
  }

  /**
   * The names of the tree: the entries (first column, and the second column some lines have after
   * two or more spaces), the paths and file names in their descriptions, "folder/: a, b" lists, and
   * a folder's files its description starts with ("record, verify, …").
   */
  function namesOf(tree: string): { names: Named[]; notNames: string[] } {
    const names: Named[] = [];
    /** lines at column 0 that do not start with a name: a tree the parse does not understand */
    const notNames: string[] = [];
    let left = "";
    for (const line of tree.split("\n")) {
      if (!line.trim()) continue;
      const cells = line.trim().split(/\s{2,}/);
      let entry = left;
      cells.forEach((cell, i) => {
        // a line at column 0 starts with an entry; a cell of names followed by a description starts another
        if (i === 0 && !line.startsWith(" ") && !isNameCell(cell)) notNames.push(line);
        if ((i === 0 && !line.startsWith(" ")) || (i > 0 && i < cells.length - 1 && isNameCell(cell))) {
          const [first, ...more] = cell.split(/,\s*/);
          entry = first!;
          if (i === 0) left = entry;
          names.push({ name: first!, entry: "" }, ...more.map((name) => ({ name, entry })));
          return;
        }
        // "bench/: processes, run, workloads": files of that folder
        for (const [, folder, list] of cell.matchAll(/([\w.-]+\/):\s*([^);]*)/g)) {
          const items = list!.split(/,\s*/).map((s) => s.trim());
          if (items.every((s) => /^[\w-]+$/.test(s))) names.push(...items.map((s) => ({ name: `${folder}${s}`, entry, stem: true })));
        }
        // a folder's description that starts with single words ("src/cli/  record, verify, check-receiver, ctl (…)"): its files
        if (i > 0 && entry.endsWith("/") && cells[i - 1]!.split(/,\s*/)[0] === entry) {
          const items = cell
            .split(/[(:]/)[0]!
            .split(",")
            .map((s) => s.trim());
          if (items.length > 1 && items.every((s) => /^[\w-]+$/.test(s))) names.push(...items.map((s) => ({ name: s, entry, stem: true })));
        }
        for (const token of cell.split(/[\s,;()`]+/)) {
          const name = token.replace(/[:.]+$/, "");
          if (isPath(name)) names.push({ name, entry, stem: !/(\.[\w-]+|\/)$/.test(name) });
        }
      });
    }
    return { names, notNames };
  }

  /** Folders the repository ignores (.gitignore's "name/" lines): build output, absent from a fresh clone. */
  const ignoredFolders = readText(".gitignore")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^\/?[\w.-]+\/$/.test(l))
    .map((l) => l.replace(/^\//, ""));

  test("every path the tree names exists in the repository (file or folder)", () => {
    const tree = block("docs/layout.md", [""], "src/main.ts").text;
    const { names, notNames } = namesOf(tree);
    expect(notNames).toEqual([]);
    // the parse found the tree: its first entry, a second-column entry, a bare name of a description, a list
    expect(names.map((n) => n.name)).toEqual(expect.arrayContaining(["src/main.ts", "src/base/", "clock.ts", "in-unit.ts", "bench/processes", "test/"]));
    const entries = tree.split("\n").filter((l) => /^\S/.test(l)).length;
    expect(names.length).toBeGreaterThan(entries * 2);

    const folders = [...new Set(names.filter((n) => n.name.endsWith("/") && !n.entry).map((n) => n.name))];
    const exists = ({ name, entry, stem }: Named) => {
      // relative to the root, the entry's folder, or (a bare name) any folder the tree lists
      const bases = ["", entry ? folderOf(entry) : "", ...(name.includes("/") ? [] : folders)];
      return bases.some((base) => {
        const path = join(ROOT, base, name);
        if (existsSync(path)) return true;
        return !!stem && existsSync(dirname(path)) && readdirSync(dirname(path)).some((f) => f.startsWith(`${name.split("/").pop()}.`));
      });
    };
    const pkg = readText("package.json");
    const missing: string[] = [];
    for (const named of names) {
      if (ignoredFolders.some((f) => named.name.startsWith(f))) {
        // build output (dist/sandgate.js): absent from a clone, so it must be what package.json builds and runs
        if (!pkg.includes(named.name.replace(/\/$/, ""))) missing.push(`${named.name} (build output that package.json does not name)`);
      } else if (!exists(named)) missing.push(named.entry ? `${named.name} (on the line of ${named.entry})` : named.name);
    }
    expect(missing).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
describe("docs/benchmark.md", () => {
  // An option no program has: parseArgs (strict) refuses options in order, so when the program's
  // first complaint is this one, every flag of the doc's line before it was accepted, with its value,
  // and the program stopped there, before building, starting or measuring anything. A program that
  // does not refuse it (no strict parsing) would start measuring: it is ended after 60 s and fails.
  const PROBE = "--docs-reference-probe";

  test("each `npm run …` line names a script of package.json, and the script's program accepts every flag shown", async () => {
    const lines = commandLines(block("docs/benchmark.md", ["sh"], "npm run bench").text);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const scripts = (JSON.parse(readText("package.json")) as { scripts: Record<string, string> }).scripts;
    for (const line of lines) {
      const m = /^npm run ([\w:-]+)(?: -- (.+))?$/.exec(line);
      expect(m, `docs/benchmark.md: ${line}`).not.toBeNull();
      const [, name, flags] = m!;
      expect(scripts[name!], `package.json has the script ${name}`).toBeDefined();
      if (!flags) continue;
      expect(flags).toMatch(/^--\w/);
      // `npm run build && tsx scripts/bench.ts`: the program is what runs last (the build is not run here)
      const program = scripts[name!]!.split("&&").pop()!.trim();
      const run = await project.run(`cd "${ROOT}" && PATH="${ROOT}/node_modules/.bin:$PATH" ${program} ${flags} ${PROBE}`, { timeoutMs: 60_000 });
      expect(run.stderr, `${program} ${flags}: the program refuses ${PROBE} and nothing before it`).toMatch(new RegExp(`Unknown option '${PROBE}'`));
      expect(run.code).not.toBe(0);
      expect(run.leftover).toEqual([]);
    }
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
describe("docs/ci.md (not run here: no Docker registry or daemon, no GitHub Actions runner)", () => {
  interface Image {
    env: Record<string, string>;
    expose: string[];
    /** the HEALTHCHECK's CMD, shell form */
    healthcheck?: string;
  }

  /** The final stage of the Dockerfile: its ENV, EXPOSE and HEALTHCHECK (continuation lines joined). */
  function image(): Image {
    const lines = readText("Dockerfile")
      .replace(/\\\n/g, " ")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    const stage = lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)));
    const out: Image = { env: {}, expose: [] };
    for (const l of stage) {
      const [instruction = "", rest = ""] = l.split(/\s+(.*)/s);
      if (/^ENV$/i.test(instruction)) for (const [, k, v] of rest.matchAll(/(\w+)=("[^"]*"|\S+)/g)) out.env[k!] = v!.replace(/^"|"$/g, "");
      if (/^EXPOSE$/i.test(instruction)) out.expose.push(...rest.split(/\s+/).map((p) => p.replace(/\/tcp$/, "")));
      if (/^HEALTHCHECK$/i.test(instruction)) out.healthcheck = /\bCMD\s+(.*)$/.exec(rest)?.[1];
    }
    return out;
  }

  /** [host port, container port] of a "8080:8080" mapping */
  const mapping = (ports: unknown) => {
    expect(ports).toHaveLength(1);
    const m = /^(\d+):(\d+)$/.exec(String((ports as unknown[])[0]));
    expect(m, `a host:container port mapping, got ${String(ports)}`).not.toBeNull();
    return [m![1]!, m![2]!] as const;
  };

  /** Every variable is a setting of src/config/config.ts, and Sandgate accepts the values. */
  const expectSettings = (env: Record<string, unknown>) => {
    const known = new Set(OPTIONS.map((o) => o.env));
    expect(Object.keys(env).filter((k) => !known.has(k))).toEqual([]);
    expect(() => resolveConfig({}, Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])))).not.toThrow();
  };

  /** A command's exit code (a health command exits 0 for healthy, 1 otherwise), as a Dockerfile writes it: the exec form (a JSON array) or the shell form. */
  const exitOf = (command: string, env: Record<string, string> = {}) => {
    const [file, ...args] = command.startsWith("[") ? (JSON.parse(command) as string[]) : ["sh", "-c", command];
    return promisify(execFile)(file!, args, { env: { ...process.env, ...env }, timeout: 30_000 }).then(
      () => 0,
      (err: { code?: number }) => err.code ?? -1,
    );
  };

  const built = image();
  const composeBlock = block("docs/ci.md", ["yaml"], "services:\n  sandgate:");
  const actionsBlock = block("docs/ci.md", ["yaml"], "runs-on: ubuntu-latest");
  let sandbox: Sandbox;
  let closedPort: number;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", watchScenarios: false });
    closedPort = await freePort();
  });
  afterAll(() => sandbox.close());

  test("the image listens where the docs map: PORT (a setting) is the EXPOSEd port, on every interface", () => {
    const config = resolveConfig({}, built.env);
    expect(built.expose).toContain(String(config.port));
    expect(config.host).toBe("0.0.0.0");
  });

  test("the real health endpoint is /__sandbox/health: a started Sandgate answers it 200", async () => {
    expect((await fetch(`${sandbox.url}/__sandbox/health`)).status).toBe(200);
  });

  test("docker compose: Sandgate's settings are real, the mapped port is the image's, service_healthy has the image's HEALTHCHECK behind it", async () => {
    const compose = parseYaml(composeBlock.text) as {
      services: Record<
        string,
        { environment?: Record<string, unknown>; ports?: unknown; volumes?: string[]; depends_on?: Record<string, { condition?: string }> }
      >;
      volumes: Record<string, unknown>;
    };
    const sandgate = compose.services.sandgate!;
    expectSettings(sandgate.environment!);
    const [host, container] = mapping(sandgate.ports);
    expect(container).toBe(String(resolveConfig({}, built.env).port));
    // payers' browsers reach the published port; the shop, on the compose network, the container's
    expect(new URL(String(sandgate.environment!.BASE_URL)).port).toBe(host);
    const shop = compose.services.shop!;
    const gateway = new URL(String(shop.environment!.GATEWAY_URL));
    expect([gateway.hostname, gateway.port]).toEqual(["sandgate", container]);
    // the coverage report lands in the named volume
    const mounts = sandgate.volumes!.map((v) => v.split(":"));
    expect(mounts.every(([name]) => name! in compose.volumes)).toBe(true);
    expect(mounts.some(([, at]) => String(sandgate.environment!.COVERAGE_REPORT).startsWith(`${at}/`))).toBe(true);
    // service_healthy needs a health check, and the image (build: a checkout of this repository) has one that works
    const healthy = Object.entries(shop.depends_on ?? {}).filter(([, d]) => d.condition === "service_healthy");
    expect(healthy.map(([name]) => name)).toEqual(["sandgate"]);
    expect(built.healthcheck).toBeDefined();
    expect(built.healthcheck).toContain("/__sandbox/health");
    expect(await exitOf(built.healthcheck!, { PORT: String(sandbox.port) })).toBe(0);
    expect(await exitOf(built.healthcheck!, { PORT: String(closedPort) })).toBe(1);
  }, 60_000);

  test("GitHub Actions: Sandgate's settings are real, the mapped port is the image's, the health command asks /__sandbox/health and works", async () => {
    const workflow = parseYaml(actionsBlock.text) as {
      jobs: Record<string, { services: Record<string, { env: Record<string, unknown>; ports: unknown; options: string }>; steps: { run?: string }[] }>;
    };
    const job = Object.values(workflow.jobs)[0]!;
    const service = job.services.sandgate!;
    expectSettings(service.env);
    const [host, container] = mapping(service.ports);
    expect(container).toBe(String(resolveConfig({}, built.env).port));
    // the steps run on the runner: they reach the published port
    const steps = job.steps.map((s) => s.run ?? "").join("\n");
    expect(new URL(/GATEWAY_URL=(\S+)/.exec(steps)![1]!).port).toBe(host);
    // docker run's --health-cmd, taken out of the options as a shell would split them
    const healthCmd = async (port: number) => {
      const options = withPorts(service.options, { [Number(container)]: port });
      const picked = await promisify(execFile)(
        "bash",
        ["-c", 'eval "set -- $OPTIONS"; while [ $# -gt 0 ]; do [ "$1" = --health-cmd ] && { printf %s "$2"; exit 0; }; shift; done; exit 3'],
        { env: { ...process.env, OPTIONS: options } },
      );
      return picked.stdout;
    };
    const command = await healthCmd(Number(container));
    const url = new URL(/https?:\/\/[^'"\s]+/.exec(command)![0]);
    expect([url.pathname, url.port]).toEqual(["/__sandbox/health", container]);
    expect(await exitOf(await healthCmd(sandbox.port))).toBe(0);
    expect(await exitOf(await healthCmd(closedPort))).toBe(1);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------
describe("docs/scenarios.md, coverage", () => {
  const scenarios = page("docs/scenarios.md");
  const blocks = fencedBlocks(scenarios, ["sh", "json"]);
  const at = blocks.findIndex((b) => b.text.includes("/__sandbox/coverage?merchant_id=CI-JOB-42"));
  const lines = at < 0 ? [] : commandLines(blocks[at]!.text);

  interface Coverage {
    merchant_id: string | null;
    scenarios: { name: string; rules: { rule: string; answers: number }[] }[];
    operations: { operation: string; produced: Record<string, number>; never: string[] }[];
  }

  /** The JSON shown right after the lines, its "…" (more of the same) left out. */
  function shown(): Coverage {
    const json = blocks[at + 1];
    expect(json?.lang).toBe("json");
    expect(json!.text).toContain('"merchant_id": "CI-JOB-42"');
    return JSON.parse(json!.text.replace(/,\s*…/g, "")) as Coverage;
  }

  /** The report has the shape shown: the same keys at every level, values of the same types. */
  function expectShape(report: Coverage, like: Coverage): void {
    const keys = (o: object) => Object.keys(o).sort();
    const types = (o: object) => Object.values(o).map((v) => (Array.isArray(v) ? "array" : typeof v));
    expect(keys(report)).toEqual(keys(like));
    const [scenario] = like.scenarios;
    const [rule] = scenario!.rules;
    const [operation] = like.operations;
    expect(report.scenarios.length).toBeGreaterThan(0);
    for (const s of report.scenarios) {
      expect([keys(s), types(s)]).toEqual([keys(scenario!), types(scenario!)]);
      for (const r of s.rules) expect([keys(r), types(r)]).toEqual([keys(rule!), types(rule!)]);
    }
    expect(report.operations.length).toBeGreaterThan(0);
    for (const o of report.operations) {
      expect([keys(o), types(o)]).toEqual([keys(operation!), types(operation!)]);
      expect(Object.values(o.produced).every((n) => typeof n === "number")).toBe(true);
      expect(o.never.every((n) => typeof n === "string")).toBe(true);
    }
  }

  /** The operations the prose says the Markdown has a row for: "(authorise, capture, …)". */
  const operationsNamed = () => /outcomes per operation \(([^)]+)\)/.exec(prose(scenarios.text).replace(/\s+/g, " "))![1]!.split(/,\s*/);

  /** A Markdown document with a table: a header row, its separator, rows. */
  const expectMarkdownTable = (md: string) => {
    expect(md).toMatch(/^# /);
    expect(md).toMatch(/^\|.*\|\n\|( *:?-+:? *\|)+\n\|.*\|$/m);
    for (const operation of operationsNamed()) expect(md).toMatch(new RegExp(`^\\| ${operation} \\|`, "m"));
  };

  test("the block: two curl lines against $URL, then --coverage-report", () => {
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^curl -s "\$URL\/__sandbox\/coverage\?merchant_id=CI-JOB-42"$/);
    expect(lines[1]).toMatch(/^curl -s "\$URL\/__sandbox\/coverage\?merchant_id=CI-JOB-42&format=markdown"$/);
    expect(lines[2]).toMatch(/^npx sandgate --coverage-report /);
  });

  test("after a payment of CI-JOB-42, curl gets the JSON shown (same shape, real rules and outcomes), then a Markdown table", async () => {
    const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", watchScenarios: false });
    try {
      expect(await pay(sandbox.url, "CI-JOB-42")).toBe("1");
      const json = await project.run(lines[0]!, { env: { URL: sandbox.url } });
      expect(json.code, json.stderr).toBe(0);
      const report = JSON.parse(json.stdout) as Coverage;
      const like = shown();
      expectShape(report, like);
      expect(report.merchant_id).toBe(like.merchant_id);
      // the rules shown are rules of that scenario, and the approved visa payment was answered by the first
      const scenario = report.scenarios.find((s) => s.name === like.scenarios[0]!.name);
      expect(scenario?.rules.map((r) => r.rule)).toEqual(expect.arrayContaining(like.scenarios[0]!.rules.map((r) => r.rule)));
      expect(scenario!.rules.find((r) => r.rule === like.scenarios[0]!.rules[0]!.rule)!.answers).toBeGreaterThanOrEqual(1);
      // the outcomes shown are outcomes of that operation
      const op = like.operations[0]!;
      const real = report.operations.find((o) => o.operation === op.operation)!;
      expect([...real.never, ...Object.keys(real.produced)]).toEqual(expect.arrayContaining([...op.never, ...Object.keys(op.produced)]));
      expect(report.operations.map((o) => o.operation)).toEqual(operationsNamed());

      const md = await project.run(lines[1]!, { env: { URL: sandbox.url } });
      expect(md.code, md.stderr).toBe(0);
      expectMarkdownTable(md.stdout);
      expect(md.stdout).toContain("CI-JOB-42");
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  test("`npx sandgate --coverage-report reports/sandgate`, stopped with SIGTERM after a payment, leaves reports/sandgate.json and .md", async () => {
    const port = await freePort();
    const sandgate = await inBackground(project, lines[2]!, port);
    let run: ScriptRun;
    try {
      expect(await pay(sandgate.url, "CI-JOB-42")).toBe("1");
    } finally {
      run = await sandgate.stop();
    }
    expect(run.stdout, run.stderr).toMatch(/^command exit \d+$/m);
    expect(run.leftover).toEqual([]);
    const json = JSON.parse(readFileSync(join(project.dir, "reports", "sandgate.json"), "utf8")) as Coverage;
    // all merchants' report: the shape shown but for merchant_id, null
    expectShape(json, shown());
    expect(json.merchant_id).toBeNull();
    expect(json.scenarios.flatMap((s) => s.rules).some((r) => r.answers >= 1)).toBe(true);
    expectMarkdownTable(readFileSync(join(project.dir, "reports", "sandgate.md"), "utf8"));
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------
describe("docs/notifications.md, sandgate check-receiver", () => {
  const notifications = page("docs/notifications.md");
  const lines = commandLines(block("docs/notifications.md", ["sh"], "npx sandgate check-receiver").text);

  /** The fields encryption_data covers, in order, as the page lists them ("… counts as empty: `a`, `b`. Verify …"). */
  function signedFields(): string[] {
    const text = prose(notifications.text).replace(/\s+/g, " ");
    const list = /counts as empty: (.*?)\. Verify it/.exec(text);
    expect(list, "the page lists the signed fields").not.toBeNull();
    return [...list![1]!.matchAll(/`([\w.]+)`/g)].map((m) => m[1]!);
  }

  /** The probe ids of the page's "| probe |" table: the names of each row's first cell, outside parentheses. */
  function probesListed(): string[] {
    const text = prose(notifications.text).split("\n");
    const head = text.findIndex((l) => /^\| probe \|/.test(l));
    expect(head, "the page has the probe table").toBeGreaterThan(-1);
    const end = text.findIndex((l, i) => i > head && !l.startsWith("|"));
    const rows = text.slice(head + 2, end);
    return rows.flatMap((row) =>
      [
        ...row
          .split("|")[1]!
          .replace(/\([^)]*\)/g, "")
          .matchAll(/`(\w+)`/g),
      ].map((m) => m[1]!),
    );
  }

  /**
   * A receiver as the page says a correct one is: verifies encryption_data (SHA-256 of the listed
   * values concatenated, then the key) over the body as received, refuses a stale one, answers 4xx
   * to a body that is not a notification, 2xx to a genuine one (a duplicate too).
   */
  function receiver(fields: string[], key: string): Server {
    const valueOf = (body: Record<string, unknown>, field: string) => {
      const v = field.startsWith("data.") ? (body.data as Record<string, unknown> | undefined)?.[field.slice(5)] : body[field];
      return v === undefined || v === null ? "" : String(v);
    };
    return createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const answer = (status: number) => res.writeHead(status, { "content-type": "text/plain" }).end(String(status));
        if (!/^application\/json\b/i.test(req.headers["content-type"] ?? "")) return answer(415);
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        } catch {
          return answer(400);
        }
        if (body === null || typeof body !== "object") return answer(400);
        const expected = createHash("sha256")
          .update(fields.map((f) => valueOf(body, f)).join("") + key)
          .digest("hex");
        if (body.encryption_data !== expected) return answer(401);
        // the page: hold the freshness window on sent_at
        if (!(Math.abs(Date.now() - Date.parse(String(body.sent_at))) <= 300_000)) return answer(400);
        answer(200);
      });
    });
  }

  interface Report {
    check: string;
    probes: { probe: string; verdict: string }[];
    not_run: string[];
    stopped: string;
    summary: { pass: number; warning: number; fail: number; not_run: number };
    passed: boolean;
  }
  type XmlNode = { [k: string]: string | XmlNode | XmlNode[] };

  let server: Server;
  let receiverPort: number;
  beforeAll(async () => {
    server = receiver(signedFields(), ACME.key);
    await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
    receiverPort = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  /** The line with the receiver (localhost:3000, shop:3000) and Sandgate (sandgate:8080) on this machine. */
  const local = (line: string, sandgatePort = 0) => {
    const out = line
      .replace(/http:\/\/(localhost|shop):3000\b/g, `http://127.0.0.1:${receiverPort}`)
      .replace(/http:\/\/sandgate:8080\b/g, `http://127.0.0.1:${sandgatePort}`);
    expect(out, line).not.toMatch(/localhost:3000|shop:3000|sandgate:8080/);
    expect(out).not.toBe(line);
    return out;
  };

  test("the block: two check-receiver lines, the page's signed fields, its probe table", () => {
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.startsWith("npx sandgate check-receiver "))).toBe(true);
    expect(signedFields()).toContain("data.amount");
    expect(probesListed()).toContain("wrong_content_type");
  });

  test("in a fresh Sandgate of the process: a correct receiver passes every probe of the page's table; check.json and check.xml say so", async () => {
    const line = local(lines.find((l) => l.includes("--json"))!);
    const run = await project.run(line, { timeoutMs: 150_000 });
    const report = JSON.parse(readFileSync(join(project.dir, "check.json"), "utf8")) as Report;
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(report.passed ? 0 : 1);
    expect(report.probes.filter((p) => p.verdict !== "pass").map((p) => `${p.probe}: ${p.verdict}`)).toEqual([]);
    expect(report.passed).toBe(true);
    expect(run.code).toBe(0);
    expect(report.probes.map((p) => p.probe).sort()).toEqual(probesListed().sort());
    for (const p of report.probes) expect(run.stdout).toContain(p.probe);

    const xml = convert(readFileSync(join(project.dir, "check.xml"), "utf8"), { format: "object" }) as unknown as XmlNode;
    const suite = (xml.testsuites as XmlNode).testsuite as XmlNode;
    const cases = ([] as XmlNode[]).concat(suite.testcase as XmlNode | XmlNode[]);
    // one test case per probe, named "<probe>: <what it sent>"
    expect(cases.map((c) => String(c["@name"]).split(":")[0]).sort()).toEqual(report.probes.map((p) => p.probe).sort());
    expect(suite["@tests"]).toBe(String(cases.length));
    expect(suite["@failures"]).toBe(String(report.summary.fail + (report.stopped ? 1 : 0)));
    expect(cases.filter((c) => "failure" in c)).toEqual([]);
    expect(run.leftover).toEqual([]);
  }, 180_000);

  test("from a running Sandgate (`npx sandgate`, PORT): the same check, every probe in its notifications log", async () => {
    const port = await freePort();
    const sandgate = await inBackground(project, "npx sandgate", port);
    let run: ScriptRun;
    let logged: { check?: string }[] = [];
    try {
      run = await project.run(
        local(
          lines.find((l) => l.includes("--sandbox"))!,
          port,
        ),
        { timeoutMs: 150_000 },
      );
      const where = /every request is in (\S+)/.exec(run.stdout)?.[1];
      expect(where, `${run.stdout}${run.stderr}`).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/__sandbox/notifications\\?check=\\S+$`));
      logged = ((await (await fetch(where!)).json()) as { notifications: { check?: string }[] }).notifications;
    } finally {
      expect((await sandgate.stop()).leftover).toEqual([]);
    }
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
    for (const probe of probesListed()) expect(run.stdout).toContain(probe);
    expect(logged.length).toBeGreaterThanOrEqual(probesListed().length);
    expect(new Set(logged.map((n) => n.check)).size).toBe(1);
  }, 240_000);
});

describe("docs/architecture.md", () => {
  test("the operator-call groups it lists are the files of src/api/calls/, one each", () => {
    const text = page("docs/architecture.md").text.replace(/\s+/g, " ");
    const listed = /a file per group: ([a-z, ]+)\)/.exec(text)![1]!.split(", ");
    const files = readdirSync(join(ROOT, "src", "api", "calls")).filter((f) => f.endsWith("-calls.ts"));
    expect(listed.map((group) => `${group.replace(/s$/, "")}-calls.ts`).sort()).toEqual(files.sort());
  });
});

describe("docs/security.md", () => {
  test("every speed promise names its bench scenario: each scenario exists, and each scenario is named where its promise is made", () => {
    const text = page("docs/security.md").text;
    const table = text.slice(text.indexOf("## Every speed promise and its figure"), text.indexOf("## Every promise and the test that keeps it"));
    const named = [...table.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!).filter((n) => n !== "npm");
    const scenarios = PROMISES.map((p) => p.name);
    expect(named.filter((n) => !scenarios.includes(n))).toEqual([]);
    for (const p of PROMISES) expect(page(p.doc).text, `${p.name} in ${p.doc}`).toContain(`\`${p.name}\``);
  });

  test("every promise names the test that keeps it: the file exists and holds the words cited", () => {
    const text = page("docs/security.md").text;
    const table = text.slice(text.indexOf("## Every promise and the test that keeps it"));
    const rows = [...table.matchAll(/^\| (.+?) \| `(test\/[\w.-]+\.ts)` › "(.+?)" \|$/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(20);
    for (const [, promise, file, words] of rows) {
      const where = join(ROOT, file!);
      expect(existsSync(where), `${promise}: ${file}`).toBe(true);
      expect(readFileSync(where, "utf8"), `${promise}: "${words}" in ${file}`).toContain(words!);
    }
    // no row left without its test
    expect(table.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| Promise") && !/› "/.test(l))).toEqual([]);
  });
});
