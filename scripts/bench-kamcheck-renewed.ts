// Benign clips checked against a reference renewed from their own scene, as a camera's slot is
// renewed (lib/cameras/, kamcheck/refresh.ts): the steady state of a camera, where the bench's
// other sets check against a reference made apart from the clip. Each clip's first half gives the
// reference: its quietest frame (of its spread frames, as a renewal picks it) or the per-pixel
// median of those frames, through JPEG at the renewal's quality; its second half is the check.
// Whatever the reference froze (rain streaks, snowflakes, a headlight's glare, a person) is
// then in the reference and not in the clip. Prints per kind the alarms (>= 50) against the
// case's own reference and against each renewed one, and the highest probability, and against the
// median with the appliance's second opinion (an alarm checked again against the case's own
// reference, as the slot's older one: lib/cameras/check-setup.ts); then, with the
// same second halves defocused after decoding (the fixtures' Gaussian, sigma scaled with the picture), how many are detected against each renewed
// reference (and the median with the second opinion), and the lowest probability. Asserts nothing.
//
//   node build/scripts/bench-kamcheck-renewed.js [fixture dir] [--kinds a,b] [--sigma S]
//
// The fixture dir defaults to the bench set; --kinds to its benign kinds that are in it; --sigma
// (px at 640 wide) to 2.5, the bench's slight defocus (night_defocus draws 2.6-7.7).
import path from 'node:path';
import cv from '../lib/video/opencv.js';
import { readImage, readVideoFrames } from '../lib/video/decode.js';
import { analyseTamper } from '../lib/kamcheck/analyse.js';
import { spread, toWorking, workingSize } from '../lib/kamcheck/cells.js';
import { quietestFrame, REFRESH_JPEG_QUALITY } from '../lib/kamcheck/refresh.js';
import { perPixelMedian } from '../lib/kamcheck/pixel-median.js';
import { MAX_TAMPER_FRAMES } from '../lib/kamcheck/limits.js';
import { setsAside } from '../lib/kamcheck/run.js';
import { BENIGN_KINDS, DEFAULT_BENCH_FIXTURE_DIR } from '../testkit/kamcheck-fixtures/manifest.js';
import { readManifest } from '../testkit/kamcheck-fixtures/generate.js';
import { compressed, defocus } from '../testkit/kamcheck-fixtures/effects.js';

const ALARM = 50;
/** The defocus applied to the second halves by default: the bench's slight defocus is 2-3.2 px at 640 wide. */
const DEFOCUS_SIGMA_AT_640 = 2.5;

/** `picture` as a renewal writes and a check reads it: JPEG at REFRESH_JPEG_QUALITY. */
const throughJpeg = (picture: cv.Mat) => compressed(picture, REFRESH_JPEG_QUALITY);

function main(): void {
  const args = process.argv.slice(2);
  const at = args.indexOf('--kinds');
  const kindsArg = at >= 0 ? args.splice(at, 2)[1].split(',') : null;
  const sigmaAt = args.indexOf('--sigma');
  const sigmaAt640 = sigmaAt >= 0 ? Number(args.splice(sigmaAt, 2)[1]) : DEFOCUS_SIGMA_AT_640;
  const dir = args[0] ?? DEFAULT_BENCH_FIXTURE_DIR;
  const manifest = readManifest(dir);
  if (!manifest) throw new Error(`no fixture set in ${dir}`);
  const present = new Set(manifest.cases.map((c) => c.kind));
  const kinds = (kindsArg ?? (BENIGN_KINDS as readonly string[]).filter((k) => present.has(k as never))) as string[];
  const rows: string[] = [];
  for (const kind of kinds) {
    const cases = manifest.cases.filter((c) => c.kind === kind);
    const tally = { own: [] as number[], quietest: [] as number[], median: [] as number[], second: [] as number[], blurQuietest: [] as number[], blurMedian: [] as number[], blurSecond: [] as number[] };
    for (const c of cases) {
      const frames = readVideoFrames(path.join(dir, c.id, 'clip.mp4'), MAX_TAMPER_FRAMES + 1).frames;
      const half = Math.floor(frames.length / 2);
      if (half < 3) continue;
      const before = spread(frames.slice(0, half));
      const check = frames.slice(half);
      const size = workingSize(frames[0].cols, frames[0].rows);
      const quietest = before[quietestFrame(before.map((f) => toWorking(f, size, false).gray))];
      const own = readImage(path.join(dir, c.id, 'reference.png'));
      const median = throughJpeg(perPixelMedian(before));
      const [againstOwn, againstMedian] = [analyseTamper(check, own).probability, analyseTamper(check, median).probability];
      tally.own.push(againstOwn);
      tally.quietest.push(analyseTamper(check, throughJpeg(quietest)).probability);
      tally.median.push(againstMedian);
      tally.second.push(withSecondOpinion(againstMedian, () => againstOwn, `${kind} ${c.id}`));
      const sigma = sigmaAt640 * (frames[0].cols / 640);
      const defocused = check.map((f) => defocus(f, sigma));
      const blurMedian = analyseTamper(defocused, median).probability;
      tally.blurQuietest.push(analyseTamper(defocused, throughJpeg(quietest)).probability);
      tally.blurMedian.push(blurMedian);
      tally.blurSecond.push(withSecondOpinion(blurMedian, () => analyseTamper(defocused, own).probability, `defocused ${kind} ${c.id}`));
    }
    const cell = (ps: number[]) => `${ps.filter((p) => p >= ALARM).length} / ${ps.length} (${Math.max(...ps)})`;
    const found = (ps: number[]) => `${ps.filter((p) => p >= ALARM).length} / ${ps.length} (${Math.min(...ps)})`;
    rows.push(`| ${kind} | ${cell(tally.own)} | ${cell(tally.quietest)} | ${cell(tally.median)} | ${cell(tally.second)} | ${found(tally.blurQuietest)} | ${found(tally.blurMedian)} | ${found(tally.blurSecond)} |`);
    console.error(rows[rows.length - 1]);
  }
  console.log(`Benign clips' second halves against a reference from their first half (${dir}); alarms (highest probability):`);
  console.log('| kind | alarms: case reference | alarms: renewed, quietest frame | alarms: renewed, per-pixel median | alarms: median, second opinion | defocus detected (lowest): quietest frame | defocus detected: per-pixel median | defocus detected: median, second opinion |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

/**
 * A check's answer with the appliance's second opinion (lib/kamcheck/run.ts, setsAside): an alarm
 * against the renewed reference is checked again against the case's own, which stands for the
 * slot's older reference; quiet there, that answer is the check's. Each case asked goes to stderr.
 */
function withSecondOpinion(first: number, again: () => number, what: string): number {
  if (first < ALARM) return first;
  const second = again();
  const setAside = setsAside(second, ALARM);
  console.error(`second opinion, ${what}: ${first} against the renewed reference, ${second} against its own: ${setAside ? 'set aside' : 'stands'}`);
  return setAside ? second : first;
}

main();
