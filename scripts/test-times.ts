// npm run test:times: the whole test run's wall time and its ten slowest files, read from the vitest
// JSON report that the script's `vitest run` writes (test-results/test-times.json). A file's time is
// from its start to its end in its worker, waits included: the time it holds a worker, which is what
// makes the run long. Exits 1 when the run failed, so that the figures of a red run are not taken
// for a green one's.
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface Report {
  success: boolean;
  startTime: number;
  numTotalTests: number;
  numFailedTests: number;
  testResults: { name: string; startTime: number; endTime: number; status: string }[];
}

const file = process.argv[2] ?? 'test-results/test-times.json';
const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
const seconds = (ms: number) => (ms / 1000).toFixed(1).padStart(6);
// The checkout the report was made in: the folder of test/, whose files every name is under.
const root = report.testResults[0]?.name.split(`${path.sep}test${path.sep}`)[0] ?? '';
const files = report.testResults.map((r) => ({
  name: path.relative(root, r.name),
  ms: r.endTime - r.startTime,
  status: r.status,
}));
const end = Math.max(...report.testResults.map((r) => r.endTime));

console.log(
  `npm test: ${files.length} files, ${report.numTotalTests} tests (${report.numFailedTests} failed), ` +
    `${seconds(end - report.startTime).trim()} s from the run's start to its last file's end`,
);
console.log('the ten slowest files (start to end in their worker, waits included):');
for (const f of files.sort((a, b) => b.ms - a.ms).slice(0, 10))
  console.log(`${seconds(f.ms)} s  ${f.name}${f.status === 'passed' ? '' : ` (${f.status})`}`);
process.exitCode = report.success ? 0 : 1;
