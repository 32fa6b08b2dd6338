// Runs every cause measurement on one clip against its reference. Order matters: the camera shift
// is estimated first and compensated, then covered cells are found (and veiled ones, which join
// them in the masked cause), and blur is measured only on cells that are not covered, so one cause
// does not leak into another.
import cv, { withTemporaries } from '../video/opencv.js';
import { readCellColours, noiseReadFrames, readsNoise, spread, toWorking, workingSize, type WorkingPicture, type WorkingSize } from './cells.js';
import { alignReference, atHalfScale, CameraShift, cellsInView, estimateShift } from './shift.js';
import { MaskMeasurement, measureMask } from './mask.js';
import { BlurMeasurement, measureBlur, SMALL_DETAIL_READ_FROM, sharpnessLost, smallDetailLost } from './blur.js';
import { noiseSigma } from './noise.js';
import { measureNight, NightMeasurement, toneSlope } from './night.js';
import { ExposureMeasurement, lumaStats, measureExposure } from './exposure.js';
import { FreezeMeasurement, measureFreeze } from './freeze.js';
import { BlackMeasurement, measureBlack } from './black.js';
import { measureVeil, VeilMeasurement } from './veil.js';
import { lightsShining, litCells } from './lights.js';
import { median } from '../stats.js';
import type { Ignored } from './ignored.js';

export interface TamperMeasurements {
  shift: CameraShift;
  mask: MaskMeasurement;
  blur: BlurMeasurement;
  exposure: ExposureMeasurement;
  freeze: FreezeMeasurement;
  black: BlackMeasurement;
  veil: VeilMeasurement;
  night: NightMeasurement;
}

function withoutLit(cells: boolean[], lit: boolean[]): boolean[] {
  return cells.map((c, i) => c && !lit[i]);
}

export function measureTamper(frames: cv.Mat[], reference: cv.Mat, ignored: Ignored | null = null): TamperMeasurements {
  if (frames.length === 0) throw new Error('measureTamper needs at least one frame');
  const size: WorkingSize = workingSize(reference.cols, reference.rows);
  // up to 9 frames spread over the clip carry every measurement (converting all 25 frames of a 720p
  // clip to the working size alone takes 40 ms); the freeze check compares these spread frames,
  // which only makes live motion more visible than between neighbouring frames
  const picked = spread(frames);
  const workingRef = toWorking(reference, size, false);
  const working = picked.map((f, k) => toWorking(f, size, readsNoise(k, picked.length)));
  try {
    return measureWorking(workingRef, working, size, ignored);
  } finally {
    // a picture already at the working size is its own working picture: the caller's to free
    const given = new Set([reference, ...frames]);
    for (const m of new Set([workingRef, ...working].flatMap((w) => [w.bgr, w.gray]))) if (!given.has(m)) m.release();
  }
}

/**
 * The measurements from pictures already at the working size: the reference, and the clip's
 * spread frames (spread() of the clip, in order). The worker converts each frame as it decodes it
 * (kamcheck/clip.ts), so that a clip's full-size frames never all live at once. What happens in
 * the camera's `ignored` areas counts for no cause: their pixels and cells are left out of every
 * measurement.
 */
export function measureWorking(ref: WorkingPicture, working: WorkingPicture[], size: WorkingSize, ignored: Ignored | null = null): TamperMeasurements {
  if (working.length === 0) throw new Error('measureWorking needs at least one frame');
  const frames8 = working.map((w) => w.gray);
  const checked = ignored?.checked;

  // the pictures made here are freed on the way out, not left to the garbage collector
  return withTemporaries((made) => {
    const shift = estimateShift(ref.gray, frames8, size, checked);
    const refOwn32 = made(ref.gray.convertTo(cv.CV_32F));
    const ref32 = made(alignReference(refOwn32, shift));
    const refColour = alignReference(ref.bgr, shift);
    if (refColour !== ref.bgr) made(refColour);
    const frames32 = frames8.map((f) => made(f.convertTo(cv.CV_32F)));
    const inView = cellsInView(shift, size).map((v, i) => v && !ignored?.cells[i]);
    const refColours = readCellColours(refColour);
    const frameColours = working.map((w) => readCellColours(w.bgr));
    const mask = measureMask(ref32, frames32, refColours, frameColours, inView);
    const visible = mask.structured.map((s, i) => s && !mask.covered[i]);
    const frameLuma = frames8.map((f) => lumaStats(f, checked));
    const exposure = measureExposure(lumaStats(ref.gray, checked), frameLuma);
    // the frames whose fine noise was read (cells.ts NOISE_FRAMES) stand for the clip's colour, its
    // noise, and its sharpness at half scale below: a clip's noise is the same in every frame, and a
    // median of 3 already ignores a passer-by. Each noise estimate takes about 0.25 ms at the working size.
    const noiseFrames = noiseReadFrames(working);
    const tone = toneSlope(mask.referenceBrightness, mask.frameBrightness, visible);
    // lights excuse darkening only: a clip no darker than its reference does not look for them
    const shining = exposure.stops < 0 ? lightsShining(ref32, frames8, checked) : 0;
    const night = measureNight(refColours, noiseFrames.map((k) => ({ colours: frameColours[k], fineNoise: working[k].fineNoise })), inView, exposure.stops, tone, shining);
    // the noise of high gain is fine detail to the Laplacian: when the clip has it, the noise's own
    // energy is taken out of both pictures. By day nothing is taken out: a reference's own noise is
    // detail the clip's compression removed, which the day's calibration includes.
    let noise: { reference: number; frames: number[] } | undefined;
    if (night.gainNoise > 0) {
      const clipNoise = median(noiseFrames.map((k) => noiseSigma(frames32[k], inView)));
      noise = { reference: noiseSigma(refOwn32, inView), frames: frames32.map(() => clipNoise) };
    }
    // at night a darker, noisier view loses contrast and fine detail everywhere: veils and films
    // need more to show (veil.ts), where the clip is darker or paler than its reference
    const veil = measureVeil(mask, inView, night.contrastLossExcused);
    // cells where a light shines (headlights, a lamp) brighten and glow: no measure of focus
    const sharpCells = night.atNight ? withoutLit(visible, litCells(mask.referenceBrightness, mask.frameBrightness, visible)) : visible;
    // the focus is compared on the reference's own pixels (blur.ts): resampled, it would lose the
    // fine detail a defocus takes
    const blur = measureBlur(refOwn32, shift, frames32, sharpCells, noise);
    // by day, a clip that lost sharpness enough to matter: was it the encoder's? (blur.ts; on the
    // frames whose noise was read, since a clip's compression is the same in every frame)
    if (!night.atNight && sharpnessLost(blur.sharpnessRatio) >= SMALL_DETAIL_READ_FROM) {
      blur.smallDetailLost = smallDetailLost(refOwn32, shift, noiseFrames.map((k) => frames32[k]), sharpCells);
    }
    if (night.atNight) {
      // at night the sharpness is also compared at half the working size, where a defocus still
      // shows and the noise, and what the encoder made of it, is smaller. Each picture's noise is
      // measured there: pyrDown's 5x5 kernel leaves white noise 0.27 of its sigma, not half, and the
      // noise a night clip keeps through its encoder is not white (a headlights case of the bench:
      // 4.0 grey levels at the working size, 0.77 at half), so no fixed factor holds.
      const refHalf = made(refOwn32.pyrDown());
      const framesHalf = noiseFrames.map((k) => made(frames32[k].pyrDown()));
      const half = measureBlur(refHalf, atHalfScale(shift), framesHalf, sharpCells, { reference: noiseSigma(refHalf, inView), frames: framesHalf.map((f) => noiseSigma(f, inView)) });
      blur.halfScaleLost = sharpnessLost(half.sharpnessRatio);
    }

    const black = measureBlack(frameLuma);
    const freeze = measureFreeze(frames8, checked);
    return { shift, mask, blur, exposure, freeze, black, veil, night };
  });
}
