// The benchmark figures of docs/BENCHMARKS.md are a saved run's, rendered, never typed by hand: the
// block between the figures markers is what bench/figures.ts makes of bench/saved/servers.json.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type DeploymentRun,
  deploymentFigures,
  deploymentFile,
  figuresIn,
  growthFigures,
  growthFile,
  perCore,
  profileFigures,
  savedProfiles,
  type SavedGrowthRun,
  type SavedRun,
  SCENARIO_SAVE_SECONDS,
  SCENARIOS_FILE,
  scenarioFigures,
  scenarioSaveRefusal,
  SERVERS_FILE,
  serversFigures,
  serversFiguresIn,
  withFigures,
  withServersFigures,
} from '../../bench/figures.ts';
import { ROOT } from '../support/contract.ts';

const page = readFileSync(path.join(ROOT, 'docs/BENCHMARKS.md'), 'utf8');
const saved: SavedRun = JSON.parse(readFileSync(path.join(ROOT, SERVERS_FILE), 'utf8'));

describe('the benchmark figures', () => {
  it('are the saved run, rendered (npm run bench -- --save writes both)', () => {
    expect(serversFiguresIn(page)).toBe(serversFigures(saved));
  });

  it('say when the run was made, on what, and how loaded the machine was', () => {
    const figures = serversFigures(saved);
    expect(saved.date).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(figures).toContain(`of ${saved.date.slice(0, 10)} `);
    expect(figures).toContain(`Node ${saved.node}`);
    expect(figures).toContain(`load average ${saved.loadAverage.toFixed(1)}`);
  });

  it("show the --baseline checkout's cold start, launched taking turns, where the run measured it", () => {
    const withBefore = serversFigures({ ...saved, coldStartBaselineMs: [110, 112, 120] });
    expect(withBefore).toContain(
      '| cold start of the --baseline checkout, launched taking turns | 112 ms median (110 – 120) |',
    );
    const { coldStartBaselineMs: _, ...without } = saved;
    expect(serversFigures(without)).not.toContain('cold start of the --baseline checkout');
  });

  it("show bare node:http's cold start, launched taking turns, and the stubs' start above it, where the run measured it", () => {
    const run = { ...saved, coldStartMs: [150, 154, 160], coldStartBareMs: [100, 105, 111] };
    const figures = serversFigures(run);
    expect(figures).toContain(
      "| cold start of bare node:http (no package), launched taking turns: the machine's floor | 105 ms median (100 – 111) |",
    );
    expect(figures).toContain("| cold start above bare node:http's (median − median) | 49 ms |");
    const { coldStartBareMs: _, ...without } = run;
    expect(serversFigures(without)).not.toContain('bare node:http (no package)');
    expect(serversFigures(without)).not.toContain('above bare');
  });

  it('a changed figure in the page is caught', () => {
    const edited = withServersFigures(
      page,
      serversFigures({ ...saved, rows: saved.rows.map((r) => ({ ...r, rps: r.rps + 1 })) }),
    );
    expect(serversFiguresIn(edited)).not.toBe(serversFigures(saved));
  });
});

describe("the scenario comparison's figures", () => {
  const run: SavedRun = JSON.parse(readFileSync(path.join(ROOT, SCENARIOS_FILE), 'utf8'));
  it('are the saved run, rendered (npm run bench -- --only sandbox,sandbox-scenario --save writes both)', () => {
    expect(figuresIn(page, 'scenarios')).toBe(scenarioFigures(run));
    expect(run.rows.map((r) => r.server)).toEqual(['sandbox', 'sandbox-scenario']);
    expect(run.ratios.scenarioVsPlain).toBe(+(run.rows[1]!.rps / run.rows[0]!.rps).toFixed(3));
    // Each round's CPU per request is in the saved run, and the ratio is their median round's.
    const ratios = run.rows[1]!.cpuRounds!.map((us, i) => us / run.rows[0]!.cpuRounds![i]!).sort((a, b) => a - b);
    expect(run.ratios.scenarioCpuRatio).toBe(+ratios[Math.floor(ratios.length / 2)]!.toFixed(3));
  });
  it('come from a run long enough for targets 5 % apart; a shorter run leaves them, saying so', () => {
    expect(run.rounds * run.duration).toBeGreaterThanOrEqual(SCENARIO_SAVE_SECONDS);
    expect(scenarioSaveRefusal(8, 10)).toBeUndefined();
    expect(scenarioSaveRefusal(11, 5)).toContain(`${SCENARIOS_FILE} left as it was: 55 s of rounds`);
  });
});

describe.each(['sqlite', 'postgres'] as const)('the settlement export figures on %s', (store) => {
  const run: SavedGrowthRun = JSON.parse(readFileSync(path.join(ROOT, growthFile(store)), 'utf8'));

  it('are the saved run, rendered (npm run bench -- --growth --save writes both)', () => {
    expect(run.store).toBe(store);
    expect(figuresIn(page, `growth-${store}`)).toBe(growthFigures(run));
  });

  it('a changed figure in the page is caught', () => {
    const edited = withFigures(
      page,
      `growth-${store}`,
      growthFigures({ ...run, rows: run.rows.map((r) => ({ ...r, exportMs: r.exportMs + 1 })) }),
    );
    expect(figuresIn(edited, `growth-${store}`)).not.toBe(growthFigures(run));
  });
});

describe("the deployment bench's figures", () => {
  for (const store of ['sqlite', 'postgres'] as const) {
    const run: DeploymentRun = JSON.parse(readFileSync(path.join(ROOT, deploymentFile(store)), 'utf8'));

    it(`${store}: are the saved run, rendered (npm run bench -- --store ${store} --save writes both)`, () => {
      expect(figuresIn(page, `deployment-${store}`)).toBe(deploymentFigures(run));
    });

    it(`${store}: put the sandbox beside the server alone and the Prism mock, with CPU per request and requests a second per core`, () => {
      expect(run.rows.map((r) => r.target)).toEqual(expect.arrayContaining(['stubs', 'mock', 'sandbox×1']));
      const sandbox = run.rows.find((r) => r.target === 'sandbox×1')!;
      if (store === 'postgres') expect(sandbox.databaseCpuMs).toBeGreaterThan(0);
      expect(deploymentFigures(run)).toContain(`| ${perCore(sandbox).toLocaleString('en-US')} |`);
      expect(perCore(sandbox)).toBe(Math.round(1000 / (sandbox.cpuMs + (sandbox.databaseCpuMs ?? 0))));
    });
  }
});

describe("the profiles' shares", () => {
  const profiles = savedProfiles(ROOT);

  it('are the saved profiles, rendered (npm run bench:profile-shares -- DIR --save NAME writes both)', () => {
    expect(profiles.map((p) => p.name)).toEqual(expect.arrayContaining(['sqlite-before', 'postgres-before']));
    expect(figuresIn(page, 'profiles')).toBe(profileFigures(profiles));
  });

  it("each profile's shares make the whole of its busy samples", () => {
    for (const p of profiles) expect(Object.values(p.shares).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
  });
});
