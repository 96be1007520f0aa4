import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node';
import type { FileTimes, TimesReport } from '../../scripts/lib/test-times-report.ts';

/**
 * Writes test-results/test-times.json for scripts/test-times.ts (npm run test:times): each file's wall
 * time (start to end in its worker, waits included: the time it holds a worker) and its CPU.
 */
export default class TimesReporter implements Reporter {
  private readonly start = Date.now();
  private readonly starts = new Map<string, number>();
  private readonly files: FileTimes[] = [];
  private root = process.cwd();

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  onTestModuleStart(module: TestModule): void {
    this.starts.set(module.moduleId, Date.now() - this.start);
  }

  onTestModuleEnd(module: TestModule): void {
    const tests = [...module.children.allTests()];
    const cpu = module.meta().cpu;
    this.files.push({
      file: path.relative(this.root, module.moduleId),
      state: module.state(),
      tests: tests.length,
      failed: tests.filter((t) => t.result().state === 'failed').length,
      startMs: this.starts.get(module.moduleId) ?? 0,
      endMs: Date.now() - this.start,
      cpuSelf: cpu?.self ?? null,
      cpuChildren: cpu?.children ?? null,
    });
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>, reason: TestRunEndReason): void {
    const report: TimesReport = {
      success: reason === 'passed' && errors.length === 0 && modules.every((m) => m.ok()),
      wallMs: Date.now() - this.start,
      files: this.files,
    };
    const file = path.join(this.root, 'test-results', 'test-times.json');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  }
}
