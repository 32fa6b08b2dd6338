// Accuracy and speed of the tamper check on the generated bench fixtures.
//
//   node build/scripts/bench-kamcheck-accuracy.js [fixture dir] [--seed N] [--kinds a,b] [--measures]
//     [--cases FILE] [--compare FILE] [--nudge PX]
//
// --kinds limits the set to those kinds (generated on their own when the set lacks them).
// Generates the bench set first when its manifest is missing, or when a set of the same seed lacks
// kinds; a directory that holds another seed's draw is left as it is (the run stops and says so).
// Prints, per tamper kind, the detection rate at probability >= 50; per benign kind the
// false-alarm rate; the ROC AUC of the probability; and per resolution the analysis time (p50/p95), decode + analysis, and their ratio
// to plain decoding of the same clip and reference. Then, per camera sensitivity level, the share
// of benign and tamper cases at or above the level's threshold, over all cases and per kind.
// --measures also prints the distribution of each raw cause measurement per kind (what the
// scorer's calibration constants were set from). --cases FILE writes each case's probability and
// causes as JSON; --compare FILE (such a file, of another version on the same set) prints the
// cases whose probability moved by COMPARE_MOVED or more, and how the alarms per kind changed.
// --nudge PX moves every clip PX px right and PX/2 down at the working size (testkit's nudged()).
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import { measureTamper } from '../lib/kamcheck/measure.js';
import { causeMeasures, combine, scoreCauses, TamperCauses } from '../lib/kamcheck/scorer.js';
import { MAX_TAMPER_FRAMES } from '../lib/kamcheck/limits.js';
import { quantile } from '../lib/stats.js';
import { BENIGN_KINDS, DEFAULT_BENCH_FIXTURE_DIR, FixtureCase, FixtureManifest, TAMPER_KINDS } from '../testkit/kamcheck-fixtures/manifest.js';
import { generateFixtureSet, readManifest } from '../testkit/kamcheck-fixtures/generate.js';
import { SET_SEEDS } from '../testkit/kamcheck-fixtures/cases.js';
import { nudged } from '../testkit/kamcheck-fixtures/effects.js';
import { SENSITIVITIES, TAMPERED_AT } from '../lib/cameras/sensitivity.js';

export interface CaseOutcome {
  fixture: FixtureCase;
  probability: number;
  causes: TamperCauses;
  /** Raw cause measurements on the scorer's "higher = more tampered" axis. */
  measures: TamperCauses;
  decodeMs: number;
  analyseMs: number;
}

export interface AccuracySummary {
  /** Per tamper kind: share with probability >= 50. */
  detection: Record<string, { rate: number; n: number }>;
  /** Per benign kind: share with probability >= 50. */
  falseAlarm: Record<string, { rate: number; n: number }>;
  auc: number;
  /** Per resolution (e.g. 1280x720): timing percentiles in ms. */
  timing: Record<string, { n: number; analyseP50: number; analyseP95: number; totalP50: number; totalP95: number; decodeP50: number; ratioP50: number; ratioP95: number }>;
}

export const ALARM_PROBABILITY = 50;

/** Runs the analytic on every case of a fixture set (decoding as the worker does). */
export function evaluateFixtures(dir: string, manifest: FixtureManifest, onCase?: (o: CaseOutcome) => void, nudge = 0): CaseOutcome[] {
  const outcomes: CaseOutcome[] = [];
  for (const fixture of manifest.cases) {
    const t0 = performance.now();
    const clip = readVideoFrames(path.join(dir, fixture.id, 'clip.mp4'), MAX_TAMPER_FRAMES + 1);
    const reference = readImage(path.join(dir, fixture.id, 'reference.png'));
    const t1 = performance.now();
    const m = measureTamper(nudged(clip.frames, nudge), reference);
    const causes = scoreCauses(m);
    const probability = combine(causes);
    const t2 = performance.now();
    const o = { fixture, probability, causes, measures: causeMeasures(m), decodeMs: t1 - t0, analyseMs: t2 - t1 };
    outcomes.push(o);
    onCase?.(o);
  }
  return outcomes;
}

/** ROC AUC of scores (positives vs negatives), ties counted half (Mann-Whitney U). */
export function rocAuc(positives: number[], negatives: number[]): number {
  if (positives.length === 0 || negatives.length === 0) return NaN;
  let wins = 0;
  for (const p of positives) for (const n of negatives) wins += p > n ? 1 : p === n ? 0.5 : 0;
  return wins / (positives.length * negatives.length);
}

export function summarise(outcomes: CaseOutcome[]): AccuracySummary {
  const rate = (os: CaseOutcome[]) => ({ rate: os.filter((o) => o.probability >= ALARM_PROBABILITY).length / Math.max(1, os.length), n: os.length });
  const detection: AccuracySummary['detection'] = {};
  const present = (k: string) => outcomes.some((o) => o.fixture.kind === k);
  for (const k of TAMPER_KINDS.filter(present)) detection[k] = rate(outcomes.filter((o) => o.fixture.kind === k));
  const falseAlarm: AccuracySummary['falseAlarm'] = {};
  for (const k of BENIGN_KINDS.filter(present)) falseAlarm[k] = rate(outcomes.filter((o) => o.fixture.kind === k));
  const auc = rocAuc(
    outcomes.filter((o) => o.fixture.label === 'tamper').map((o) => o.probability),
    outcomes.filter((o) => o.fixture.label === 'benign').map((o) => o.probability),
  );
  const timing: AccuracySummary['timing'] = {};
  const resolutions = [...new Set(outcomes.map((o) => `${o.fixture.width}x${o.fixture.height}`))];
  for (const res of resolutions) {
    const os = outcomes.filter((o) => `${o.fixture.width}x${o.fixture.height}` === res);
    const a = os.map((o) => o.analyseMs);
    const t = os.map((o) => o.analyseMs + o.decodeMs);
    const r = os.map((o) => (o.analyseMs + o.decodeMs) / o.decodeMs);
    timing[res] = {
      n: os.length,
      analyseP50: quantile(a, 0.5),
      analyseP95: quantile(a, 0.95),
      totalP50: quantile(t, 0.5),
      totalP95: quantile(t, 0.95),
      decodeP50: quantile(os.map((o) => o.decodeMs), 0.5),
      ratioP50: quantile(r, 0.5),
      ratioP95: quantile(r, 0.95),
    };
  }
  return { detection, falseAlarm, auc, timing };
}

export function formatSummary(s: AccuracySummary): string {
  const pct = (v: number) => `${(100 * v).toFixed(1)}%`.padStart(7);
  const lines: string[] = [];
  lines.push('tamper kind               n  detected (p>=50)   target >= 95%');
  for (const [k, v] of Object.entries(s.detection)) lines.push(`${k.padEnd(24)} ${String(v.n).padStart(3)}  ${pct(v.rate)}            ${v.rate >= 0.95 ? 'ok' : 'BELOW'}`);
  lines.push('');
  lines.push('benign kind               n  false alarm        target <= 2%');
  for (const [k, v] of Object.entries(s.falseAlarm)) lines.push(`${k.padEnd(24)} ${String(v.n).padStart(3)}  ${pct(v.rate)}            ${v.rate <= 0.02 ? 'ok' : 'ABOVE'}`);
  lines.push('');
  lines.push(`ROC AUC (probability, tamper vs benign): ${s.auc.toFixed(4)}   target >= 0.98: ${s.auc >= 0.98 ? 'ok' : 'BELOW'}`);
  lines.push('');
  lines.push('resolution     n  analysis p50/p95 ms  decode p50 ms  decode+analysis p50/p95 ms  (decode+analysis)/decode p50/p95');
  for (const [res, t] of Object.entries(s.timing)) {
    lines.push(
      `${res.padEnd(11)} ${String(t.n).padStart(4)}  ${t.analyseP50.toFixed(1).padStart(8)} / ${t.analyseP95.toFixed(1).padEnd(8)}  ${t.decodeP50.toFixed(1).padStart(11)}  ${t.totalP50.toFixed(1).padStart(12)} / ${t.totalP95.toFixed(1).padEnd(12)}  ${t.ratioP50.toFixed(2).padStart(10)} / ${t.ratioP95.toFixed(2)}`,
    );
  }
  return lines.join('\n');
}

/** Distribution of each raw cause measurement per kind: min p5 p50 p95 max. */
export function formatMeasures(outcomes: CaseOutcome[]): string {
  const causes: (keyof TamperCauses)[] = ['blur', 'moved', 'masked', 'exposure', 'frozen', 'black'];
  const lines: string[] = [];
  for (const cause of causes) {
    lines.push(`-- ${cause}: min p5 p50 p95 max`);
    for (const kind of [...TAMPER_KINDS, ...BENIGN_KINDS]) {
      const v = outcomes.filter((o) => o.fixture.kind === kind).map((o) => o.measures[cause]);
      if (v.length === 0) continue;
      const q = [0, 0.05, 0.5, 0.95, 1].map((p) => quantile(v, p).toFixed(3).padStart(8));
      lines.push(`${kind.padEnd(24)} ${q.join(' ')}`);
    }
  }
  return lines.join('\n');
}

/**
 * Per sensitivity level, the share of cases at or above its threshold: benign (false alarms) and
 * tamper (detections) over all cases, with the kind that fares worst, then per kind. A level only
 * moves the threshold, so the same outcomes answer for every level.
 */
export function formatSensitivities(outcomes: CaseOutcome[]): string {
  const pct = (v: number) => `${(100 * v).toFixed(1)}%`.padStart(7);
  const kinds = [...TAMPER_KINDS, ...BENIGN_KINDS].filter((k) => outcomes.some((o) => o.fixture.kind === k));
  const ofKind = (k: string) => outcomes.filter((o) => o.fixture.kind === k);
  const share = (os: CaseOutcome[], at: number) => os.filter((o) => o.probability >= at).length / Math.max(1, os.length);
  // Over all cases of a label, and its worst kind: most alarms for benign, fewest for tamper.
  const overall = (label: 'tamper' | 'benign', at: number) => {
    const rates = kinds.filter((k) => ofKind(k)[0].fixture.label === label).map((k) => ({ k, r: share(ofKind(k), at) }));
    if (rates.length === 0) return '      -'.padEnd(43);
    const worst = rates.reduce((w, x) => ((label === 'benign' ? x.r > w.r : x.r < w.r) ? x : w));
    return `${pct(share(outcomes.filter((o) => o.fixture.label === label), at))}  (${worst.k} ${pct(worst.r).trim()})`.padEnd(43);
  };
  const lines = ['Sensitivity levels', 'level    alarm at p>=  false alarm (worst benign kind)             detected (weakest tamper kind)'];
  for (const s of SENSITIVITIES) lines.push(`${s.padEnd(8)} ${String(TAMPERED_AT[s]).padStart(12)}  ${overall('benign', TAMPERED_AT[s])} ${overall('tamper', TAMPERED_AT[s])}`.trimEnd());
  lines.push('');
  lines.push(`kind                           n  ${SENSITIVITIES.map((s) => `${s} ${TAMPERED_AT[s]}`.padStart(10)).join('')}   (share at p >= level)`);
  for (const k of kinds) {
    const os = ofKind(k);
    lines.push(`${`${os[0].fixture.label === 'benign' ? 'benign: ' : ''}${k}`.padEnd(28)} ${String(os.length).padStart(3)}  ${SENSITIVITIES.map((s) => pct(share(os, TAMPERED_AT[s])).padStart(10)).join('')}`);
  }
  return lines.join('\n');
}

/** A probability change that --compare lists: smaller ones are the noise of a constant's tuning. */
const COMPARE_MOVED = 5;

type CaseRecord = Record<string, { kind: string; probability: number; causes: TamperCauses }>;

function caseRecord(outcomes: CaseOutcome[]): CaseRecord {
  return Object.fromEntries(outcomes.map((o) => [o.fixture.id, { kind: o.fixture.kind, probability: o.probability, causes: o.causes }]));
}

function formatComparison(before: CaseRecord, now: CaseRecord): string {
  const lines = [`Against ${Object.keys(before).length} cases of the earlier run: moved by ${COMPARE_MOVED} or more, and alarms (p >= ${ALARM_PROBABILITY}) per kind where they changed`];
  const alarms = new Map<string, [number, number]>();
  for (const [id, n] of Object.entries(now)) {
    const b = before[id];
    if (!b) continue;
    const a = alarms.get(n.kind) ?? [0, 0];
    a[0] += b.probability >= ALARM_PROBABILITY ? 1 : 0;
    a[1] += n.probability >= ALARM_PROBABILITY ? 1 : 0;
    alarms.set(n.kind, a);
    if (Math.abs(n.probability - b.probability) >= COMPARE_MOVED) lines.push(`  ${id}: ${b.probability} -> ${n.probability} ${JSON.stringify(n.causes)}`);
  }
  for (const [kind, [b, n]] of alarms) if (b !== n) lines.push(`  ${kind}: ${b} -> ${n} at p >= ${ALARM_PROBABILITY}`);
  if (lines.length === 1) lines.push('  none');
  return lines.join('\n');
}

const USAGE = 'usage: bench-kamcheck-accuracy.js [fixture dir] [--seed N] [--kinds a,b] [--measures] [--cases FILE] [--compare FILE] [--nudge PX]';

function parseOptions(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        seed: { type: 'string' },
        kinds: { type: 'string' },
        measures: { type: 'boolean' },
        cases: { type: 'string' },
        compare: { type: 'string' },
        nudge: { type: 'string' },
      },
    });
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  const { values: o, positionals } = parseOptions(process.argv.slice(2));
  if (o.help) {
    console.log(USAGE);
    return;
  }
  const nudge = o.nudge === undefined ? 0 : Number(o.nudge);
  if (!(nudge >= 0)) throw new Error('--nudge takes a number of pixels at the working size');
  const seed = o.seed === undefined ? undefined : Number(o.seed);
  const kinds = o.kinds?.split(',');
  const unknown = kinds?.filter((k) => !(TAMPER_KINDS as readonly string[]).includes(k) && !(BENIGN_KINDS as readonly string[]).includes(k));
  if (unknown?.length) throw new Error(`unknown kinds: ${unknown.join(', ')}`);
  const dir = positionals[0] ?? DEFAULT_BENCH_FIXTURE_DIR;
  let manifest = readManifest(dir);
  const has = (k: string) => manifest!.cases.some((c) => c.kind === k);
  // a folder of another draw stops the run there (testkit/fixture-dir.ts): nothing is regenerated over it
  if (!manifest || (seed !== undefined && manifest.seed !== seed) || !(kinds ?? [...TAMPER_KINDS, ...BENIGN_KINDS]).every(has)) {
    console.log(`generating the bench set in ${dir}` + (kinds ? ` (${kinds.join(', ')})` : ''));
    manifest = await generateFixtureSet('bench', dir, (l) => console.log(l), seed, kinds);
  }
  if (kinds) manifest = { ...manifest, cases: manifest.cases.filter((c) => kinds.includes(c.kind)) };
  console.log(`\nTamper check accuracy on ${manifest.cases.length} generated cases, seed ${manifest.seed}` +
    (manifest.seed === SET_SEEDS.bench ? ' (the set the thresholds were calibrated on)' : ' (held out: not used for calibration)'));
  let done = 0;
  const outcomes = evaluateFixtures(dir, manifest, (o) => {
    if (++done % 50 === 0) console.error(`${done}/${manifest!.cases.length}`);
    const wrong = (o.fixture.label === 'tamper') !== o.probability >= ALARM_PROBABILITY;
    if (wrong) console.error(`miss ${o.fixture.id} ${o.fixture.scene} p=${o.probability} ${JSON.stringify(o.causes)} ${JSON.stringify(o.fixture.params)}`);
  }, nudge);
  if (nudge) console.log(`Every clip nudged by ${nudge} px right and ${nudge / 2} px down at the working size (the analysis times include the nudge)`);
  if (o.measures) console.log(formatMeasures(outcomes) + '\n');
  console.log(formatSummary(summarise(outcomes)));
  console.log('\n' + formatSensitivities(outcomes));
  if (o.cases) fs.writeFileSync(o.cases, JSON.stringify(caseRecord(outcomes), null, 1));
  if (o.compare) console.log('\n' + formatComparison(JSON.parse(fs.readFileSync(o.compare, 'utf8')) as CaseRecord, caseRecord(outcomes)));
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
