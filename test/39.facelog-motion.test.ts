// The face log's motion stage (lib/facelog/motion/motion-regions.ts) on the decoded frames of the
// test set's sequence videos, by day and in the `dark` night (a third of the day's light, noise
// sigma 12, through x264). The detector looks only where motion is, within a budget, so each
// region the night's noise makes takes a tile from the people.
import { expect } from 'chai';
import cv from '../lib/video/opencv.js';
import { MotionRegions } from '../lib/facelog/motion/motion-regions.js';
import { intersection } from '../lib/facelog/geometry.js';
import type { Box } from '../lib/facelog/types.js';
import { facelogVideo, isCountedFace, type FacelogTruth } from '../testkit/facelog-fixtures/truth.js';

/** The face log's detector runs: every fifth frame at 25 fps. */
const DETECT_EVERY = 5;

describe('face log: motion regions at night', function () {
  this.timeout(120_000);

  it('keeps the people in a region in the dark without a region for every noisy pixel', () => {
    const day = motionOf(facelogVideo('sequence'));
    const night = motionOf(facelogVideo('sequence', undefined, true));
    const report = `regions a run: ${day.regionsPerRun.toFixed(1)} by day, ${night.regionsPerRun.toFixed(1)} at night; faces >= 30 px in a region: ${day.inRegion}/${day.faces} by day, ${night.inRegion}/${night.faces} at night`;
    expect(night.faces, report).to.be.at.least(10);
    expect(night.inRegion / night.faces, report).to.be.at.least(0.9);
    // A region for every pixel the gain's noise changed would be dozens a run (78 at 640x480).
    expect(night.regionsPerRun, report).to.be.at.most(6 * Math.max(1, day.regionsPerRun));
  });
});

/** MotionRegions over a video's detector runs: regions per run, and how many truth faces >= 30 px lie (half or more) in one. */
function motionOf({ file, truth }: { file: string; truth: FacelogTruth }) {
  const boxes = new Map<number, Box[]>();
  for (const a of truth.appearances) for (const b of a.boxes) if (isCountedFace(b)) boxes.set(b.frame, [...(boxes.get(b.frame) ?? []), b]);
  const motion = new MotionRegions(truth.width, truth.height);
  const capture = new cv.VideoCapture(file);
  let runs = 0;
  let regions = 0;
  let faces = 0;
  let inRegion = 0;
  try {
    for (let i = 0, frame = capture.read(); !frame.empty; i++, frame = capture.read()) {
      if (i % DETECT_EVERY !== 0) continue;
      const found = motion.update(frame.bgrToGray());
      // The first run has no previous frame and returns the whole frame.
      if (i === 0) continue;
      runs++;
      regions += found.length;
      for (const b of boxes.get(i) ?? []) {
        faces++;
        if (found.some((r) => intersection(r, b) >= 0.5 * b.width * b.height)) inRegion++;
      }
    }
  } finally {
    capture.release();
  }
  return { regionsPerRun: regions / runs, faces, inRegion };
}
