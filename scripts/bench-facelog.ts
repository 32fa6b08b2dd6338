// Accuracy and speed of the face log on the generated bench set (exact ground truth).
//
//   node build/scripts/bench-facelog.js [fixture dir] [--set bench|night] [--seed N] [--limit N] [--only PATTERN] [--no-overlay] [--detectable]
//
// --set night runs the night set (the bench's design at 640x480 and 1280x720 in low light, darker,
// or infrared: testkit/facelog-fixtures/scenarios.ts) from its own folder.
// --no-overlay runs the face logs without their overlay video (no encoder; a face log always has
// one, so this measures what the rest costs, not something the service offers).
// Generates the bench set first when its manifest is missing. Runs each video through the whole
// face log (detector, tracker, sightings, gender, overlay, XML, thumbnails) as a worker would, one
// job at a time, and before it ffmpeg decoding the same video to BGR frames, into a pipe that
// drops them and straight to /dev/null, and the face log's own decoder and encoder with no
// analysis between them (the baselines, testkit/decode-baseline.ts).
// Prints per resolution: sighting precision/recall/F1 (sightings matched to the truth's
// appearances by the overlap of their frame intervals; where the faces are, from the XML, decides
// between people on screen together), duplicate rate, gender accuracy per true
// gender, the share of truth faces >= 30 px that are in some track, how many frames after its face
// reached 30 px each appearance was first in a track (and, by night look, how many within 5 and
// 10 frames: the detector runs every fifth frame; with --detectable, also counted from the first
// frame where the detector finds the face when it searches that whole frame), processing fps, its ratio to
// the video's own frame rate (x real time) and its time over each baseline's; then the CPU the
// face logs took (this process's, and their ffmpeg children's) and the least time it needs spread
// over all the machine's cores, over the decode into a pipe: how close any scheduling could come.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { probeMedia } from '../lib/video/probe.js';
import { fpsOrDefault } from '../lib/video/fps.js';
import { runFaceLog } from '../lib/facelog/run.js';
import { publishResults } from '../lib/jobs/published-results.js';
import { xmlFile } from '../lib/facelog/output/result-files.js';
import { generateFacelogSet } from '../testkit/facelog-fixtures/generate.js';
import { decodeBaseline, type DecodeBaseline } from '../testkit/decode-baseline.js';
import { DEFAULT_FACELOG_BENCH_DIR, DEFAULT_FACELOG_NIGHT_DIR, isCountedFace, readFacelogManifest, readTruth, type FacelogTruth, type TruthFaceBox } from '../testkit/facelog-fixtures/truth.js';
import { combineScores, scoreSightings, type PredictedSighting } from '../testkit/facelog-fixtures/score.js';
import { parseFaceLogXml, sightingFaces, type FaceLogXml, type XmlFace } from '../testkit/facelog-fixtures/read-xml.js';
import { iou } from '../lib/facelog/geometry.js';
import cv from '../lib/video/opencv.js';
import { createBlazeFaceDetector } from '../lib/facelog/detect/blazeface.js';
import type { FaceDetector } from '../lib/facelog/detect/detector.js';
import { MODEL_DIR } from '../lib/facelog/models.js';
import { procCpuMs } from '../lib/proc-stats.js';
import type { Sighting } from '../lib/facelog/sightings/sighting.js';

interface VideoOutcome {
  resolution: string;
  /** A night video's look (low, dark, ir); absent by day. */
  look?: string;
  frames: number;
  fps: number;
  decode: DecodeBaseline;
  processMs: number;
  truth: FacelogTruth;
  sightings: PredictedSighting[];
  coverage: Coverage;
  detectorTiles: number;
  detectorCost: number;
  /** CPU ms of the face log: this process's (the analysis, and the threads that move frames to and from ffmpeg) and its ffmpeg decoder's and encoder's. */
  cpu: { process: number; ffmpeg: number };
}

function parseArgs(argv: string[]) {
  let dir: string | undefined;
  let set: 'bench' | 'night' = 'bench';
  let seed: number | undefined;
  let limit = Infinity;
  let only: RegExp | undefined;
  let overlay = true;
  let detectable = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--set') {
      const v = argv[++i];
      if (v !== 'bench' && v !== 'night') throw new Error(`--set must be bench or night, got ${v}`);
      set = v;
    } else if (argv[i] === '--seed') seed = Number(argv[++i]);
    else if (argv[i] === '--limit') limit = Number(argv[++i]);
    else if (argv[i] === '--only') only = new RegExp(argv[++i]);
    else if (argv[i] === '--no-overlay') overlay = false;
    else if (argv[i] === '--detectable') detectable = true;
    else dir = argv[i];
  }
  return { dir: dir ?? (set === 'night' ? DEFAULT_FACELOG_NIGHT_DIR : DEFAULT_FACELOG_BENCH_DIR), set, seed, limit, only, overlay, detectable };
}

/** Each sighting with its faces, so that the scorer can tell apart people on screen together. */
function placeSightings(sightings: Omit<Sighting, 'tracks'>[], xml: FaceLogXml): PredictedSighting[] {
  return sightings.map((s) => ({ ...s, faces: sightingFaces(xml, s.sighting_id) }));
}

/**
 * Truth faces at least 30 px wide, unhidden and inside the frame, how many of them a track covers
 * (IoU >= 0.3), and where the others are within their appearance: before its first covered face
 * (found late), after its last (lost early), in between (gaps), or in an appearance no track covers.
 */
interface Coverage {
  big: number;
  tracked: number;
  /** Face records of the XML, and those on no truth face (any size, hidden or not) in their frame. */
  faces: number;
  stray: number;
  missed: { late: number; gap: number; early: number; never: number };
  /**
   * Per appearance that some track covers: frames from its first face >= 30 px (unhidden, inside
   * the frame) to the first such face a track covers. How long after a face could be found the
   * log has it: the detector runs every fifth frame at 25 fps, so 0-4 is as soon as it can be.
   */
  lateFrames: number[];
  /** With --detectable: the same, counted from the first frame where a whole-frame search finds the face (0 where none does before the track). */
  lateFromDetectable?: number[];
}

function emptyCoverage(): Coverage {
  return { big: 0, tracked: 0, faces: 0, stray: 0, missed: { late: 0, gap: 0, early: 0, never: 0 }, lateFrames: [] };
}

function faceCoverage(truth: FacelogTruth, faces: XmlFace[]): Coverage {
  const byFrame = new Map<number, XmlFace[]>();
  for (const f of faces) byFrame.set(f.frame, [...(byFrame.get(f.frame) ?? []), f]);
  const c: Coverage = { ...emptyCoverage(), faces: faces.length };
  const truthByFrame = new Map<number, TruthFaceBox[]>();
  for (const a of truth.appearances) for (const b of a.boxes) truthByFrame.set(b.frame, [...(truthByFrame.get(b.frame) ?? []), b]);
  for (const f of faces) if (!(truthByFrame.get(f.frame) ?? []).some((b) => iou(f, b) >= 0.3)) c.stray++;
  for (const a of truth.appearances) {
    const big = a.boxes.filter(isCountedFace);
    const covered = big.map((b) => (byFrame.get(b.frame) ?? []).some((f) => iou(f, b) >= 0.3));
    const first = covered.indexOf(true);
    const last = covered.lastIndexOf(true);
    c.big += big.length;
    if (first >= 0) c.lateFrames.push(big[first].frame - big[0].frame);
    big.forEach((_, i) => {
      if (covered[i]) c.tracked++;
      else if (first < 0) c.missed.never++;
      else if (i < first) c.missed.late++;
      else if (i > last) c.missed.early++;
      else c.missed.gap++;
    });
  }
  return c;
}

/**
 * Per appearance that some track covers: frames from the first frame where the detector, searching
 * the whole frame, finds its face >= 30 px (IoU >= 0.3) to the first face a track covers; 0 where
 * it finds it no earlier. How soon after a face could be found the log has it.
 */
function lateFromDetectable(file: string, truth: FacelogTruth, faces: XmlFace[], detector: FaceDetector): number[] {
  const spans = truth.appearances.flatMap((a) => {
    const big = a.boxes.filter(isCountedFace);
    const first = big.find((b) => faces.some((f) => f.frame === b.frame && iou(f, b) >= 0.3));
    return first ? [{ boxes: big.filter((b) => b.frame < first.frame), tracked: first.frame }] : [];
  });
  const found = spans.map(() => Infinity);
  const wanted = new Set(spans.flatMap((s) => s.boxes.map((b) => b.frame)));
  const capture = new cv.VideoCapture(file);
  try {
    for (let i = 0, frame = capture.read(); !frame.empty && wanted.size; i++, frame = capture.read()) {
      if (!wanted.delete(i)) continue;
      const detections = detector.detect(frame, { minSize: 30 });
      spans.forEach((s, k) => {
        const box = s.boxes.find((b) => b.frame === i);
        if (box && i < found[k] && detections.some((d) => iou(d.box, box) >= 0.3)) found[k] = i;
      });
    }
  } finally {
    capture.release();
  }
  return spans.map((s, k) => (Number.isFinite(found[k]) ? s.tracked - found[k] : 0));
}

async function main() {
  const { dir, set, seed, limit, only, overlay, detectable } = parseArgs(process.argv.slice(2));
  const fullFrame = detectable ? createBlazeFaceDetector(MODEL_DIR) : null;
  let manifest = readFacelogManifest(dir);
  if (!manifest || manifest.set !== set || (seed !== undefined && manifest.seed !== seed)) {
    console.log(`generating the face-log ${set} set in ${dir} ...`);
    manifest = await generateFacelogSet(set, dir, (l) => console.log(`  ${l}`), seed);
  }
  const results = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-facelog-'));
  const outcomes: VideoOutcome[] = [];
  const videos = manifest.videos.filter((v) => v.file.endsWith('.mp4') && (!only || only.test(v.file))).slice(0, limit);
  for (const [i, v] of videos.entries()) {
    const file = path.join(dir, v.file);
    const truth = readTruth(path.join(dir, v.truth));
    const media = await probeMedia(file);
    const decode = await decodeBaseline(file, media);
    const out = path.join(results, String(i));
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const ffmpeg0 = procCpuMs('self').children;
    const r = await runFaceLog(
      { jobId: `bench-${i}`, videoPath: file, videoName: v.file, resultsDir: out, width: media.width, height: media.height, fps: media.fps,
        frames: media.frames, still: false, startFrame: 0, maxFrames: 0, minSize: 30, gender: true, trackThumbnails: false, overlayVideo: overlay },
      () => undefined,
    );
    const processMs = performance.now() - t0;
    const used = process.cpuUsage(cpu0);
    const cpu = { process: (used.user + used.system) / 1000, ffmpeg: procCpuMs('self').children - ffmpeg0 };
    // As the queue does once the job is final: the run wrote into a `.partial` folder of its own.
    publishResults(r.stagedResults);
    const xml = parseFaceLogXml(fs.readFileSync(path.join(out, xmlFile(`bench-${i}`)), 'utf8'));
    const coverage = faceCoverage(truth, xml.faces);
    if (fullFrame) coverage.lateFromDetectable = lateFromDetectable(file, truth, xml.faces, fullFrame);
    const sightings = placeSightings(r.sightings, xml);
    fs.rmSync(out, { recursive: true, force: true });
    outcomes.push({ resolution: `${media.width}x${media.height}`, look: v.night?.kind as string | undefined, frames: r.frames_processed, fps: media.fps, decode, processMs, truth, sightings, coverage, detectorTiles: r.detectorTiles, detectorCost: r.detectorCost, cpu });
    const s = scoreSightings(truth, sightings);
    console.log(
      `${v.file}: ${r.frames_processed} frames, truth ${s.truth}, sightings ${s.predicted}, matched ${s.matched}, dup ${s.duplicates}; ` +
        `${((r.frames_processed / processMs) * 1000).toFixed(1)} fps, ${(r.detectorTiles / r.frames_processed).toFixed(2)} model runs/frame costing ${(r.detectorCost / r.frames_processed).toFixed(2)} 256-px runs (decode into a pipe ${((r.frames_processed / decode.pipeMs) * 1000).toFixed(0)} fps, to /dev/null ${((r.frames_processed / decode.devNullMs) * 1000).toFixed(0)} fps, decode and encode ${((r.frames_processed / decode.transcodeMs) * 1000).toFixed(0)} fps); ` +
        `faces >= 30 px ${coverage.tracked}/${coverage.big}, missed ${missedText(coverage)}, stray ${coverage.stray}/${coverage.faces}; ` +
        `frames late per appearance ${JSON.stringify(coverage.lateFrames)}${coverage.lateFromDetectable ? `, from detectable ${JSON.stringify(coverage.lateFromDetectable)}` : ''}`,
    );
  }
  fs.rmSync(results, { recursive: true, force: true });
  if (!overlay) console.log('\nWithout the overlay video (--no-overlay): no encoder ran.');
  printTable(outcomes, manifest.set);
  if (outcomes.some((o) => o.look)) printLooks(outcomes);
  printCpu(outcomes);
  printMissed(outcomes);
}

const pct = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(1)}%`);

/** The accuracy of some videos: scored per video (frame numbers are per video), then pooled. */
function accuracyOf(list: VideoOutcome[]) {
  const total = combineScores(list.map((o) => scoreSightings(o.truth, o.sightings)));
  const gender = (k: 'male' | 'female') => `${pct(total.gender[k].accuracy)} (${total.gender[k].classified})`;
  const big = list.reduce((n, o) => n + o.coverage.big, 0);
  const tracked = list.reduce((n, o) => n + o.coverage.tracked, 0);
  return { total, male: gender('male'), female: gender('female'), inTrack: pct(big ? tracked / big : null) };
}

function printTable(outcomes: VideoOutcome[], set: string) {
  console.log(`\nFace log on the ${set} set (min_size 30, gender on, one job at a time on this machine)\n`);
  console.log('| resolution | videos | appearances | precision | recall | F1 | duplicates | gender acc. male (n) | gender acc. female (n) | faces >= 30 px in a track | model runs / frame (in 256-px runs) | fps | x real time | time / decode into a pipe | time / decode to /dev/null | time / decode and encode only |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [res, list] of byResolution(outcomes)) {
    const { total, male, female, inTrack } = accuracyOf(list);
    const frames = list.reduce((n, o) => n + o.frames, 0);
    const processS = list.reduce((n, o) => n + o.processMs, 0) / 1000;
    const pipeS = list.reduce((n, o) => n + o.decode.pipeMs, 0) / 1000;
    const devNullS = list.reduce((n, o) => n + o.decode.devNullMs, 0) / 1000;
    const transcodeS = list.reduce((n, o) => n + o.decode.transcodeMs, 0) / 1000;
    const fps = frames / processS;
    const tiles = list.reduce((n, o) => n + o.detectorTiles, 0);
    const cost = list.reduce((n, o) => n + o.detectorCost, 0);
    console.log(
      `| ${res} | ${list.length} | ${total.truth} | ${pct(total.precision)} | ${pct(total.recall)} | ${total.f1.toFixed(3)} | ${pct(total.duplicate_rate)} | ${male} | ${female} | ${inTrack} | ${(tiles / frames).toFixed(2)} (${(cost / frames).toFixed(2)}) | ${fps.toFixed(1)} | ${(fps / fpsOrDefault(list[0].fps)).toFixed(2)}x | ${(processS / pipeS).toFixed(2)}x | ${(processS / devNullS).toFixed(2)}x | ${(processS / transcodeS).toFixed(2)}x |`,
    );
  }
}

/** Accuracy per night look, both resolutions together: which kind of night is hard. */
function printLooks(outcomes: VideoOutcome[]) {
  console.log('\nBy night look (low: about half the day\'s light; dark: about a third, heavier noise; ir: infrared)\n');
  console.log('| look | videos | appearances | F1 | duplicates | gender acc. male (n) | gender acc. female (n) | faces >= 30 px in a track | missed late | frames late: median / 90th pct / max | tracked within 5 / 10 frames |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const looks = [...new Set(outcomes.map((o) => o.look ?? 'day'))];
  for (const look of looks) {
    const list = outcomes.filter((o) => (o.look ?? 'day') === look);
    const { total, male, female, inTrack } = accuracyOf(list);
    const late = list.reduce((n, o) => n + o.coverage.missed.late, 0);
    console.log(`| ${look} | ${list.length} | ${total.truth} | ${total.f1.toFixed(3)} | ${pct(total.duplicate_rate)} | ${male} | ${female} | ${inTrack} | ${late} | ${lateText(list.flatMap((o) => o.coverage.lateFrames))} |`);
  }
  if (!outcomes.some((o) => o.coverage.lateFromDetectable)) return;
  console.log('\nFrames late from the first frame a whole-frame search finds the face (--detectable)\n');
  console.log('| look | frames late: median / 90th pct / max | tracked within 5 / 10 frames |');
  console.log('|---|---|---|');
  for (const look of looks) {
    const list = outcomes.filter((o) => (o.look ?? 'day') === look);
    console.log(`| ${look} | ${lateText(list.flatMap((o) => o.coverage.lateFromDetectable ?? []))} |`);
  }
}

/**
 * Where the face logs' time went in CPU, and the least time this machine needs for that CPU (all
 * of it spread over every core): the face log can come no closer to the decode into a pipe than
 * that, however its work is scheduled.
 */
function printCpu(outcomes: VideoOutcome[]) {
  const cores = os.availableParallelism();
  console.log(`\nCPU of the face logs (this process: the analysis and the threads moving frames; its ffmpeg children: decoder and overlay encoder), ${cores} cores\n`);
  console.log('| resolution | face log time | this process CPU | decoder and encoder CPU | all CPU / cores: least time | least time / decode into a pipe | face log time / decode into a pipe |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [res, list] of byResolution(outcomes)) {
    const sum = (f: (o: VideoOutcome) => number) => list.reduce((n, o) => n + f(o), 0) / 1000;
    const processS = sum((o) => o.processMs);
    const pipeS = sum((o) => o.decode.pipeMs);
    const own = sum((o) => o.cpu.process);
    const ffmpeg = sum((o) => o.cpu.ffmpeg);
    const least = (own + ffmpeg) / cores;
    console.log(`| ${res} | ${processS.toFixed(1)} s | ${own.toFixed(1)} s | ${ffmpeg.toFixed(1)} s | ${least.toFixed(1)} s | ${(least / pipeS).toFixed(2)}x | ${(processS / pipeS).toFixed(2)}x |`);
  }
}

/** Outcomes grouped by resolution, smallest first. */
function byResolution(outcomes: VideoOutcome[]): [string, VideoOutcome[]][] {
  const byRes = new Map<string, VideoOutcome[]>();
  for (const o of outcomes) byRes.set(o.resolution, [...(byRes.get(o.resolution) ?? []), o]);
  return [...byRes.entries()].sort((a, b) => parseInt(a[0]) - parseInt(b[0]));
}

function printMissed(outcomes: VideoOutcome[]) {
  const byRes = new Map<string, Coverage>();
  for (const o of outcomes) {
    const c = byRes.get(o.resolution) ?? emptyCoverage();
    c.lateFrames.push(...o.coverage.lateFrames);
    if (o.coverage.lateFromDetectable) c.lateFromDetectable = [...(c.lateFromDetectable ?? []), ...o.coverage.lateFromDetectable];
    c.big += o.coverage.big;
    c.faces += o.coverage.faces;
    c.stray += o.coverage.stray;
    c.tracked += o.coverage.tracked;
    for (const k of ['late', 'gap', 'early', 'never'] as const) c.missed[k] += o.coverage.missed[k];
    byRes.set(o.resolution, c);
  }
  console.log('\nFaces >= 30 px in no track, by where they are in their appearance; face records of the XML on no truth face\n');
  for (const [res, c] of byRes) console.log(`${res}: missed ${c.big - c.tracked} of ${c.big}: ${missedText(c)}; stray ${c.stray} of ${c.faces} records; frames late (median / 90th pct / max | within 5 / 10 frames): ${lateText(c.lateFrames)}${c.lateFromDetectable ? `; from detectable: ${lateText(c.lateFromDetectable)}` : ''}`);
}

/** How late appearances were first tracked (Coverage.lateFrames): median, 90th percentile, most; share within 5 and 10 frames. */
function lateText(frames: number[]): string {
  if (!frames.length) return '- | -';
  const sorted = [...frames].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const within = (n: number) => pct(sorted.filter((f) => f < n).length / sorted.length);
  return `${at(0.5)} / ${at(0.9)} / ${sorted[sorted.length - 1]} | ${within(5)} / ${within(10)}`;
}

function missedText(c: Coverage): string {
  return `${c.missed.late} late, ${c.missed.gap} in gaps, ${c.missed.early} early end, ${c.missed.never} never`;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
