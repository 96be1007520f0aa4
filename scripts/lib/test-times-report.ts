// The report test/support/times-reporter.ts writes (test-results/test-times.json) and scripts/test-times.ts reads.

/** One test file's figures in test-results/test-times.json. */
export interface FileTimes {
  /** The file, relative to the checkout. */
  file: string;
  state: string;
  tests: number;
  failed: number;
  /** Milliseconds from the run's start to the file's start and end in its worker. */
  startMs: number;
  endMs: number;
  /** CPU seconds (user + system) of the file's worker and of its finished children (test/support/cpu-meter.ts). */
  cpuSelf: number | null;
  cpuChildren: number | null;
}

export interface TimesReport {
  success: boolean;
  wallMs: number;
  files: FileTimes[];
}
