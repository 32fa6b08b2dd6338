// The frame rate assumed when a video does not say its own (a still, a stream with no rate, a
// broken header): 25 fps, the PAL rate of the surveillance cameras this service serves.

export const DEFAULT_FPS = 25;

/** `fps` when it is a usable rate (above 0 and at most `max`), DEFAULT_FPS otherwise. */
export function fpsOrDefault(fps: number, max = Infinity): number {
  return fps > 0 && fps <= max ? fps : DEFAULT_FPS;
}
