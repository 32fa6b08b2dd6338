// Areas of a camera's picture its checks ignore, as polygons in fractions of the picture. Shared by
// the API (how much of the picture they leave) and the worker (which pixels and cells they take
// out of each measurement: lib/kamcheck/ignored.ts).
import type { IgnoreArea } from './camera-settings.js';

/** Whether (x, y) is inside the polygon (even-odd rule). */
export function insidePolygon(polygon: IgnoreArea, x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i];
    const [xj, yj] = polygon[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** The share of the picture the areas cover together, on a 100x100 grid of sample points. */
export function ignoredShare(areas: IgnoreArea[], samples = 100): number {
  if (areas.length === 0) return 0;
  let covered = 0;
  for (let r = 0; r < samples; r++) {
    for (let c = 0; c < samples; c++) {
      const x = (c + 0.5) / samples;
      const y = (r + 0.5) / samples;
      if (areas.some((a) => insidePolygon(a, x, y))) covered++;
    }
  }
  return covered / (samples * samples);
}
