// Prints the slowest test files (where the suite's time goes) and one plain closing line, "Tests: N passed, N failed,
// N skipped", that CI logs can be read by.
import type { Reporter, TestModule } from 'vitest/node';

/** how many of the slowest test files are listed */
const SLOWEST_SHOWN = 20;

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) counts.failed++; // a suite that did not load
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') counts.failed++;
        else counts.skipped++;
      }
    }
    const slowest = [...testModules]
      .map((module) => ({
        name: `${module.project.name} ${module.relativeModuleId}`,
        seconds: (module.diagnostic().duration + module.diagnostic().collectDuration) / 1000,
      }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, SLOWEST_SHOWN);
    process.stdout.write(
      `\nSlowest test files (tests and hooks, with their imports):\n${slowest
        .map(({ name, seconds }) => `  ${seconds.toFixed(1).padStart(7)} s  ${name}`)
        .join('\n')}\n`,
    );
    process.stdout.write(`\nTests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}
