// How a person moves through a pinch-point view: walks towards the camera (the face grows from
// ~30 px to ~150 px and drifts down and sideways), sways and turns a little, passes through
// brighter and darker light, then walks out of the picture or fades (behind a door, round a corner).

/** Face centre and width in output pixels. */
export interface FacePlace {
  x: number;
  y: number;
  width: number;
}

export interface WalkPlan {
  /** First frame of the walk (the face starts fading in here). */
  startFrame: number;
  /** Frames from the smallest to the largest face. */
  approachFrames: number;
  from: FacePlace;
  to: FacePlace;
  fadeInFrames: number;
  /** After the approach: walk out of the picture towards `exitTo`, or fade out where it is. */
  exit: 'leave' | 'fade';
  exitFrames: number;
  /** Where the face centre goes when leaving (outside the frame). */
  exitTo: { x: number; y: number };
  /** In-plane rotation: base + amplitude * sin(2 pi t / period + phase), degrees. */
  roll: { base: number; amplitude: number; periodFrames: number; phase: number };
  /** Turn of the head, degrees (positive: towards the viewer's right), from the start to the end of the approach. */
  yaw: { from: number; to: number };
  /** Gain of the light on the person: from -> to along the walk, times a bump (a ceiling light) at `bumpAt` (0..1 of the approach). */
  light: { from: number; to: number; bump: number; bumpAt: number; bumpWidth: number };
}

/** Where the person is and how they look in one frame. */
export interface Pose {
  cx: number;
  cy: number;
  faceWidth: number;
  rollDeg: number;
  yawDeg: number;
  gain: number;
  opacity: number;
}

/** Largest in-plane rotation a plan may ask for, degrees (the face box ignores roll up to this). */
export const ROLL_LIMIT = 8;
/** Largest yaw, degrees (the face log promises faces up to 30 degrees from frontal). */
export const YAW_LIMIT = 25;

export function lastFrame(plan: WalkPlan): number {
  return plan.startFrame + plan.approachFrames + plan.exitFrames;
}

/**
 * Walking at constant speed towards the camera, the size of the face grows as 1 / distance: fast at
 * the end. `progress` is the share of the size change done (0..1), which also moves the face along
 * the image path (the projection of a straight walk on the floor).
 */
function approach(plan: WalkPlan, t: number): { width: number; progress: number } {
  const u = Math.min(1, Math.max(0, t / plan.approachFrames));
  const w0 = plan.from.width;
  const w1 = plan.to.width;
  if (Math.abs(w1 - w0) < 1e-6) return { width: w0, progress: u }; // standing still (a photo)
  const width = 1 / (1 / w0 + u * (1 / w1 - 1 / w0));
  return { width, progress: (width - w0) / (w1 - w0) };
}

export function poseAt(plan: WalkPlan, frame: number): Pose | undefined {
  const t = frame - plan.startFrame;
  if (t < 0 || frame > lastFrame(plan)) return undefined;
  const { width, progress } = approach(plan, t);
  let cx = plan.from.x + progress * (plan.to.x - plan.from.x);
  let cy = plan.from.y + progress * (plan.to.y - plan.from.y);
  let faceWidth = width;
  let opacity = Math.min(1, (t + 1) / (plan.fadeInFrames + 1));
  const after = t - plan.approachFrames;
  if (after > 0) {
    const e = after / plan.exitFrames;
    if (plan.exit === 'leave') {
      cx = plan.to.x + e * (plan.exitTo.x - plan.to.x);
      cy = plan.to.y + e * (plan.exitTo.y - plan.to.y);
      faceWidth = plan.to.width * (1 + 0.15 * e);
    } else {
      // fading behind something: still walking, slowly
      cx = plan.to.x + 0.1 * after * Math.sign(plan.to.x - plan.from.x);
      cy = plan.to.y + 0.1 * after;
      opacity = Math.max(0, 1 - after / plan.exitFrames);
    }
  }
  const { roll, yaw, light } = plan;
  const rollDeg = Math.max(-ROLL_LIMIT, Math.min(ROLL_LIMIT, roll.base + roll.amplitude * Math.sin((2 * Math.PI * t) / roll.periodFrames + roll.phase)));
  const yawDeg = Math.max(-YAW_LIMIT, Math.min(YAW_LIMIT, yaw.from + progress * (yaw.to - yaw.from)));
  const gain = (light.from + progress * (light.to - light.from)) * (1 + light.bump * Math.exp(-(((progress - light.bumpAt) / light.bumpWidth) ** 2)));
  return { cx, cy, faceWidth, rollDeg, yawDeg, gain, opacity };
}
