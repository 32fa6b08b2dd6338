// Precision and recall of the face log on still images (generated with exact ground truth:
// testkit/facelog-fixtures/stills.ts; real faces 30-200 px, both genders, on textured pictures).
//
//   node build/scripts/bench-facelog-stills.js [fixture dir] [--seed N] [--count N] [--json FILE]
//
// Generates the draw first when the dir holds no manifest of that seed (default seed 11, the
// calibration draw; 12 is the held-out one). Runs each still through the whole face log as a worker
// does (runFaceLog, still: true, min_size 30, gender off), one job at a time, and matches each
// reported sighting to a truth face by the IoU of its box (the XML's face of its track) >= 0.3, one
// to one, most confident first. Prints precision, recall and F1 overall, by truth face width and
// gender (recall) and by sighting width (precision), false sightings per image with their
// confidences, the confidences of true sightings, and ms per image. --json writes every sighting
// and every track of the XML (reported or not) with its match, for calibration.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { probeMedia } from '../lib/video/probe.js';
import { publishResults } from '../lib/jobs/published-results.js';
import { runFaceLog } from '../lib/facelog/run.js';
import { xmlFile } from '../lib/facelog/output/result-files.js';
import { iou } from '../lib/facelog/geometry.js';
import type { Box } from '../lib/facelog/types.js';
import cv from '../lib/video/opencv.js';
import { faceModels } from '../lib/facelog/models.js';
import { seeAgain, STILL_VIEWS, type StillView } from '../lib/facelog/detect/still-evidence.js';
import { parseFaceLogXml } from '../testkit/facelog-fixtures/read-xml.js';
import { readTruth, type FacelogTruth, type Gender } from '../testkit/facelog-fixtures/truth.js';
import { DEFAULT_STILLS_BENCH_DIR, generateStills, readStillsManifest, STILLS_BENCH_COUNT, STILLS_SEEDS } from '../testkit/facelog-fixtures/stills.js';

/** A sighting is on a truth face when their boxes overlap this much. */
const MATCH_IOU = 0.3;
/** Face width bands, px: [from, to). */
const BANDS: Array<[number, number]> = [[0, 50], [50, 100], [100, Infinity]];
const bandName = ([a, b]: [number, number]) => (b === Infinity ? `>= ${a} px` : a === 0 ? `< ${b} px` : `${a}-${b - 1} px`);
const bandOf = (width: number) => BANDS.find(([a, b]) => width >= a && width < b)!;

interface Reported {
  box: Box;
  confidence: number;
  /** Index of the truth face it matched, or -1. */
  truth: number;
}

interface StillOutcome {
  file: string;
  background: string;
  truth: FacelogTruth;
  sightings: Reported[];
  /** Every track of the XML: its box, its detector score, the truth face it lies on (-1: none), reported or not. */
  tracks: Array<{ box: Box; score: number; truth: number; reported: boolean }>;
  ms: number;
}

function parseArgs(argv: string[]) {
  let dir = DEFAULT_STILLS_BENCH_DIR;
  let seed: number = STILLS_SEEDS.calibration;
  let count = STILLS_BENCH_COUNT;
  let json: string | undefined;
  let candidates: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--seed') seed = Number(argv[++i]);
    else if (argv[i] === '--candidates') candidates = argv[++i];
    else if (argv[i] === '--count') count = Number(argv[++i]);
    else if (argv[i] === '--json') json = argv[++i];
    else dir = argv[i];
  }
  return { dir, seed, count, json, candidates };
}

/** One-to-one matches of boxes to truth boxes (IoU >= MATCH_IOU), in the given order. */
function matchBoxes(boxes: Box[], truth: Box[]): number[] {
  const used = new Set<number>();
  return boxes.map((b) => {
    let best = -1;
    let bestIou = MATCH_IOU;
    truth.forEach((t, k) => {
      const v = iou(b, t);
      if (!used.has(k) && v >= bestIou) {
        best = k;
        bestIou = v;
      }
    });
    if (best >= 0) used.add(best);
    return best;
  });
}

async function main() {
  const { dir, seed, count, json, candidates } = parseArgs(process.argv.slice(2));
  let manifest = readStillsManifest(dir);
  if (!manifest || manifest.seed !== seed || manifest.videos.length !== count) {
    console.log(`generating ${count} stills of draw ${seed} in ${dir} ...`);
    manifest = generateStills(dir, count, seed, (l) => console.log(`  ${l}`));
  }
  if (candidates) {
    writeCandidates(dir, manifest.videos, candidates);
    return;
  }
  const results = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-facelog-stills-'));
  const outcomes: StillOutcome[] = [];
  for (const [i, v] of manifest.videos.entries()) {
    const file = path.join(dir, v.file);
    const truth = readTruth(path.join(dir, v.truth));
    const media = await probeMedia(file);
    const out = path.join(results, String(i));
    const t0 = performance.now();
    const r = await runFaceLog(
      { jobId: `still-${i}`, videoPath: file, videoName: v.file, resultsDir: out, width: media.width, height: media.height, fps: media.fps,
        frames: 1, still: true, startFrame: 0, maxFrames: 0, minSize: 30, gender: false, trackThumbnails: false },
      () => undefined,
    );
    const ms = performance.now() - t0;
    // As the queue does once the job is final: the run wrote into a `.partial` folder of its own.
    publishResults(r.stagedResults);
    const xml = parseFaceLogXml(fs.readFileSync(path.join(out, xmlFile(`still-${i}`)), 'utf8'));
    fs.rmSync(out, { recursive: true, force: true });
    const truthBoxes = truth.appearances.map((a) => a.boxes[0]);
    const trackBox = (n: number) => xml.faces.find((f) => f.track === n)!;
    const bySighting = new Map(xml.tracks.filter((t) => t.sighting).map((t) => [t.sighting, t.number]));
    const sightings = [...r.sightings].sort((a, b) => b.confidence - a.confidence).map((s) => ({ box: trackBox(bySighting.get(s.sighting_id)!), confidence: s.confidence }));
    const matched = matchBoxes(sightings.map((s) => s.box), truthBoxes);
    const reported = new Set(bySighting.values());
    const trackList = [...xml.tracks].sort((a, b) => trackBox(b.number).confidence - trackBox(a.number).confidence);
    const trackMatch = matchBoxes(trackList.map((t) => trackBox(t.number)), truthBoxes);
    const o: StillOutcome = {
      file: v.file,
      background: truth.background,
      truth,
      sightings: sightings.map((s, k) => ({ ...s, truth: matched[k] })),
      tracks: trackList.map((t, k) => ({ box: pick(trackBox(t.number)), score: trackBox(t.number).confidence, truth: trackMatch[k], reported: reported.has(t.number) })),
      ms,
    };
    outcomes.push(o);
    const tp = o.sightings.filter((s) => s.truth >= 0).length;
    const fps = o.sightings.filter((s) => s.truth < 0);
    console.log(
      `${v.file}: truth ${truthBoxes.length}, sightings ${o.sightings.length}, true ${tp}, false ${fps.length}` +
        `${fps.length ? ` (confidence ${fps.map((s) => s.confidence.toFixed(2)).join(', ')})` : ''}, tracks ${xml.tracks.length}; ${ms.toFixed(0)} ms`,
    );
  }
  fs.rmSync(results, { recursive: true, force: true });
  if (json) fs.writeFileSync(json, JSON.stringify(outcomes.map(({ truth, ...o }) => ({ ...o, faces: truth.appearances.map((a) => ({ ...pick(a.boxes[0]), gender: a.gender })) })), null, 1));
  printSummary(outcomes, seed);
}

/** Views tried besides STILL_VIEWS when choosing them (--candidates): the 10 views compared. */
const EXPLORED_VIEWS: StillView[] = [
  { mirror: true, faceWidth: 40, tile: 128, dx: -0.3, dy: -0.25 },
  { mirror: false, faceWidth: 80, tile: 192, dx: -0.2, dy: 0.3 },
  { mirror: false, faceWidth: 64, tile: 128, dx: 0, dy: 0 },
  { mirror: true, faceWidth: 100, tile: 256, dx: 0.25, dy: -0.2 },
  { mirror: false, faceWidth: 120, tile: 256, dx: 0, dy: 0 },
  { mirror: true, faceWidth: 48, tile: 192, dx: 0, dy: 0.3 },
];

/**
 * For calibration: every detection of the whole-image search (as the face log's first frame asks
 * it) with its scores in the still views (still-evidence.ts) and the truth face it lies on.
 */
function writeCandidates(dir: string, videos: Array<{ file: string; truth: string }>, out: string) {
  const { detector } = faceModels();
  const rows: object[] = [];
  let ms = 0;
  for (const v of videos) {
    const truth = readTruth(path.join(dir, v.truth));
    const frame = cv.imread(path.join(dir, v.file), cv.IMREAD_COLOR);
    const found = detector.detect(frame, { minSize: 30 });
    const t0 = performance.now();
    const seen = seeAgain(detector, frame, found, [...STILL_VIEWS, ...EXPLORED_VIEWS]);
    ms += performance.now() - t0;
    const match = matchBoxes(seen.map((d) => d.box), truth.appearances.map((a) => a.boxes[0]));
    seen.forEach((d, k) => rows.push({ file: v.file, background: truth.background, box: pick(d.box), score: d.score, views: d.views, truth: match[k], gender: match[k] >= 0 ? truth.appearances[match[k]].gender : null }));
  }
  fs.writeFileSync(out, JSON.stringify(rows));
  console.log(`${rows.length} candidates of ${videos.length} stills in ${out}; views ${(ms / videos.length).toFixed(0)} ms / image`);
}

const pick = (b: Box): Box => ({ x: b.x, y: b.y, width: b.width, height: b.height });

function prf(tp: number, predicted: number, truth: number) {
  const precision = predicted ? tp / predicted : 1;
  const recall = truth ? tp / truth : 1;
  const f1 = precision + recall ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, f1 };
}

function printSummary(outcomes: StillOutcome[], seed: number) {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const truthFaces = outcomes.flatMap((o) => o.truth.appearances.map((a, k) => ({ box: a.boxes[0], gender: a.gender as Gender, found: o.sightings.some((s) => s.truth === k) })));
  const sightings = outcomes.flatMap((o) => o.sightings);
  const tp = sightings.filter((s) => s.truth >= 0).length;
  const all = prf(tp, sightings.length, truthFaces.length);
  const empty = outcomes.filter((o) => o.truth.appearances.length === 0);
  console.log(`\nFace log on ${outcomes.length} stills (draw ${seed}; ${empty.length} without a face), min_size 30, one job at a time\n`);
  console.log('| truth faces | sightings | true | false | precision | recall | F1 | false / image | ms / image (mean, max) |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  const ms = outcomes.map((o) => o.ms);
  console.log(
    `| ${truthFaces.length} | ${sightings.length} | ${tp} | ${sightings.length - tp} | ${pct(all.precision)} | ${pct(all.recall)} | ${all.f1.toFixed(3)} | ` +
      `${((sightings.length - tp) / outcomes.length).toFixed(2)} | ${(ms.reduce((a, b) => a + b, 0) / ms.length).toFixed(0)}, ${Math.max(...ms).toFixed(0)} |`,
  );
  console.log('\n| face width | truth faces | found (recall) | sightings | true (precision) |');
  console.log('|---|---|---|---|---|');
  for (const band of BANDS) {
    const t = truthFaces.filter((f) => bandOf(f.box.width) === band);
    const s = sightings.filter((x) => bandOf(x.box.width) === band);
    const st = s.filter((x) => x.truth >= 0).length;
    const found = t.filter((f) => f.found).length;
    console.log(`| ${bandName(band)} | ${t.length} | ${found} (${t.length ? pct(found / t.length) : '-'}) | ${s.length} | ${st} (${s.length ? pct(st / s.length) : '-'}) |`);
  }
  console.log('\n| gender | truth faces | found (recall) |');
  console.log('|---|---|---|');
  for (const g of ['male', 'female'] as const) {
    const t = truthFaces.filter((f) => f.gender === g);
    const found = t.filter((f) => f.found).length;
    console.log(`| ${g} | ${t.length} | ${found} (${pct(found / Math.max(1, t.length))}) |`);
  }
  const conf = (xs: Reported[]) => xs.map((s) => s.confidence.toFixed(2)).sort().join(' ') || '-';
  console.log(`\nFalse sightings by image: ${outcomes.map((o) => o.sightings.filter((s) => s.truth < 0).length).join(' ')}`);
  for (const o of outcomes) {
    const f = o.sightings.filter((s) => s.truth < 0);
    if (f.length) console.log(`  ${o.file} (${o.background}): ${f.map((s) => `${Math.round(s.box.width)} px at ${s.confidence.toFixed(2)}`).join(', ')}`);
  }
  console.log(`Confidence of false sightings: ${conf(sightings.filter((s) => s.truth < 0))}`);
  console.log(`Confidence of true sightings: ${conf(sightings.filter((s) => s.truth >= 0))}`);
  const below = sightings.filter((s) => s.confidence < 0.4).length;
  console.log(`Sightings with confidence below 0.4: ${below} of ${sightings.length}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
