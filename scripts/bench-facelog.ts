// Accuracy and speed of the face log on the generated bench set (exact ground truth).
//
//   node build/scripts/bench-facelog.js [fixture dir] [--seed N] [--limit N] [--only PATTERN]
//
// Generates the bench set first when its manifest is missing. Runs each video through the whole
// face log (detector, tracker, sightings, gender, overlay, XML, thumbnails) as a worker would, one
// job at a time, and before it plain decoding of the same video in the same run (the baseline).
// Prints per resolution: sighting precision/recall/F1 (sightings matched to the truth's
// appearances by the overlap of their frame intervals; where the faces are, from the XML, decides
// between people on screen together), duplicate rate, gender accuracy per true
// gender, the share of truth faces >= 30 px that are in some track, processing fps, its ratio to
// the video's own frame rate (x real time) and to plain decoding.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { readFrames } from '../lib/video/frame-reader.js';
import { probeMedia } from '../lib/video/probe.js';
import { runFaceLog, XML_FILE } from '../lib/facelog/run.js';
import { generateFacelogSet } from './facelog-fixtures/generate.js';
import { DEFAULT_FACELOG_BENCH_DIR, readFacelogManifest, readTruth, type FacelogTruth } from './facelog-fixtures/truth.js';
import { combineScores, scoreSightings, type PredictedSighting } from './facelog-fixtures/score.js';
import { parseFaceLogXml, sightingFaces, type FaceLogXml, type XmlFace } from './facelog-fixtures/read-xml.js';
import { iou } from '../lib/facelog/geometry.js';
import type { Sighting } from '../lib/facelog/sightings/sighting.js';

interface VideoOutcome {
  resolution: string;
  frames: number;
  fps: number;
  decodeMs: number;
  processMs: number;
  truth: FacelogTruth;
  sightings: PredictedSighting[];
  facesBig: number;
  facesTracked: number;
  detectorTiles: number;
}

function parseArgs(argv: string[]) {
  let dir = DEFAULT_FACELOG_BENCH_DIR;
  let seed: number | undefined;
  let limit = Infinity;
  let only: RegExp | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--seed') seed = Number(argv[++i]);
    else if (argv[i] === '--limit') limit = Number(argv[++i]);
    else if (argv[i] === '--only') only = new RegExp(argv[++i]);
    else dir = argv[i];
  }
  return { dir, seed, limit, only };
}

async function decodeMs(file: string, width: number, height: number): Promise<number> {
  const t0 = performance.now();
  const source = readFrames(file, { width, height });
  for await (const frame of source.frames()) void frame;
  return performance.now() - t0;
}

/** Each sighting with its faces, so that the scorer can tell apart people on screen together. */
function placeSightings(sightings: Omit<Sighting, 'tracks'>[], xml: FaceLogXml): PredictedSighting[] {
  return sightings.map((s) => ({ ...s, faces: sightingFaces(xml, s.sighting_id) }));
}

/** Truth faces at least 30 px wide, unhidden and inside the frame, and how many of them a track covers (IoU >= 0.3). */
function faceCoverage(truth: FacelogTruth, faces: XmlFace[]): { big: number; tracked: number } {
  const byFrame = new Map<number, XmlFace[]>();
  for (const f of faces) byFrame.set(f.frame, [...(byFrame.get(f.frame) ?? []), f]);
  let big = 0;
  let tracked = 0;
  for (const a of truth.appearances) {
    for (const b of a.boxes) {
      if (b.width < 30 || b.occluded || b.visible < 0.9) continue;
      big++;
      if ((byFrame.get(b.frame) ?? []).some((f) => iou(f, b) >= 0.3)) tracked++;
    }
  }
  return { big, tracked };
}

async function main() {
  const { dir, seed, limit, only } = parseArgs(process.argv.slice(2));
  let manifest = readFacelogManifest(dir);
  if (!manifest || (seed !== undefined && manifest.seed !== seed)) {
    console.log(`generating the face-log bench set in ${dir} ...`);
    manifest = await generateFacelogSet('bench', dir, (l) => console.log(`  ${l}`), seed);
  }
  const results = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-facelog-'));
  const outcomes: VideoOutcome[] = [];
  const videos = manifest.videos.filter((v) => v.file.endsWith('.mp4') && (!only || only.test(v.file))).slice(0, limit);
  for (const [i, v] of videos.entries()) {
    const file = path.join(dir, v.file);
    const truth = readTruth(path.join(dir, v.truth));
    const media = await probeMedia(file);
    const decode = await decodeMs(file, media.width, media.height);
    const out = path.join(results, String(i));
    const t0 = performance.now();
    const r = await runFaceLog(
      { jobId: `bench-${i}`, videoPath: file, videoName: v.file, resultsDir: out, width: media.width, height: media.height, fps: media.fps,
        frames: media.frames, still: false, maxFrames: 0, minSize: 30, gender: true, trackThumbnails: false },
      () => undefined,
    );
    const processMs = performance.now() - t0;
    const xml = parseFaceLogXml(fs.readFileSync(path.join(out, XML_FILE), 'utf8'));
    const coverage = faceCoverage(truth, xml.faces);
    const sightings = placeSightings(r.sightings, xml);
    fs.rmSync(out, { recursive: true, force: true });
    outcomes.push({ resolution: `${media.width}x${media.height}`, frames: r.frames_processed, fps: media.fps, decodeMs: decode, processMs, truth, sightings, facesBig: coverage.big, facesTracked: coverage.tracked, detectorTiles: r.detectorTiles });
    const s = scoreSightings(truth, sightings);
    console.log(
      `${v.file}: ${r.frames_processed} frames, truth ${s.truth}, sightings ${s.predicted}, matched ${s.matched}, dup ${s.duplicates}; ` +
        `${((r.frames_processed / processMs) * 1000).toFixed(1)} fps, ${(r.detectorTiles / r.frames_processed).toFixed(2)} model runs/frame (decode ${((r.frames_processed / decode) * 1000).toFixed(0)} fps)`,
    );
  }
  fs.rmSync(results, { recursive: true, force: true });
  printTable(outcomes);
}

function printTable(outcomes: VideoOutcome[]) {
  const byRes = new Map<string, VideoOutcome[]>();
  for (const o of outcomes) byRes.set(o.resolution, [...(byRes.get(o.resolution) ?? []), o]);
  const pct = (x: number | null) => (x === null ? '-' : `${(x * 100).toFixed(1)}%`);
  console.log('\nFace log on the bench set (min_size 30, gender on, one job at a time on this machine)\n');
  console.log('| resolution | videos | appearances | precision | recall | F1 | duplicates | gender acc. male (n) | gender acc. female (n) | faces >= 30 px in a track | model runs / frame | fps | x real time | time / plain decode |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [res, list] of [...byRes.entries()].sort((a, b) => parseInt(a[0]) - parseInt(b[0]))) {
    // Scored per video (frame numbers are per video), then pooled.
    const total = combineScores(list.map((o) => scoreSightings(o.truth, o.sightings)));
    const g = (k: 'male' | 'female') => `${pct(total.gender[k].accuracy)} (${total.gender[k].classified})`;
    const frames = list.reduce((n, o) => n + o.frames, 0);
    const processS = list.reduce((n, o) => n + o.processMs, 0) / 1000;
    const decodeS = list.reduce((n, o) => n + o.decodeMs, 0) / 1000;
    const fps = frames / processS;
    const big = list.reduce((n, o) => n + o.facesBig, 0);
    const tracked = list.reduce((n, o) => n + o.facesTracked, 0);
    const tiles = list.reduce((n, o) => n + o.detectorTiles, 0);
    console.log(
      `| ${res} | ${list.length} | ${total.truth} | ${pct(total.precision)} | ${pct(total.recall)} | ${total.f1.toFixed(3)} | ${pct(total.duplicate_rate)} | ${g('male')} | ${g('female')} | ${pct(big ? tracked / big : null)} | ${(tiles / frames).toFixed(2)} | ${fps.toFixed(1)} | ${(fps / (list[0].fps || 25)).toFixed(2)}x | ${(processS / decodeS).toFixed(2)}x |`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
