// A vitest reporter (beside the default one): at the end of a run, the ten slowest test files with
// their project, so the suite's budget (README: npm test) stays in sight and a file that grew is seen.
import type { Reporter, TestModule } from "vitest/node";

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const files = modules
      .map((m) => ({ name: `${m.project.name}: ${m.relativeModuleId}`, ms: m.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10);
    if (!files.length) return;
    const total = modules.reduce((sum, m) => sum + m.diagnostic().duration, 0);
    process.stdout.write(
      `\nslowest test files (of ${modules.length}, ${(total / 1000).toFixed(0)} s in all, run two at a time):\n` +
        files.map((f) => `${(f.ms / 1000).toFixed(1).padStart(8)} s  ${f.name}`).join("\n") +
        "\n",
    );
  }
}
