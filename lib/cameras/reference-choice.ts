// Which stored reference a check without an image uses: of the newest reference of each slot, the
// one nearest in time of day (round midnight), among those of the clip's size. No database here:
// the service chooses for uploads, the worker for stream captures (whose size it learns first).
import { timeOfDayDistance } from './time-of-day.js';

export interface ReferenceCandidate {
  slot: number;
  minuteOfDay: number;
  width: number;
  height: number;
  createdAt: number;
}

export type Choice<R> = { found: R } | { none: true } | { otherSizes: { width: number; height: number }[] };

/** The origins of references the appliance made itself from a quiet check's clip, not ones a person set. */
export const AUTOMATIC_ORIGINS: readonly string[] = ['renewed', 'learned'];

function isAutomatic(r: { origin?: string | null }): boolean {
  return AUTOMATIC_ORIGINS.includes(r.origin ?? '');
}

/**
 * The reference of `found`'s slot just older than it, of its size, when `found` is one the
 * appliance made itself (isAutomatic): what a check that alarms against `found` asks for a second
 * opinion (lib/cameras/check-setup.ts). `refs` ordered as newestPerSlot takes them.
 */
export function olderInSlot<R extends ReferenceCandidate & { origin?: string | null }>(refs: R[], found: R): R | null {
  if (!isAutomatic(found)) return null;
  const slot = refs.filter((r) => r.slot === found.slot);
  const at = slot.indexOf(found);
  if (at < 0) return null;
  return slot.slice(at + 1).find((r) => r.width === found.width && r.height === found.height) ?? null;
}

/** The newest reference of each slot of `refs` (ordered by slot, newest first within a slot). */
export function newestPerSlot<R extends ReferenceCandidate>(refs: R[]): R[] {
  const newest = new Map<number, R>();
  for (const r of refs) if (!newest.has(r.slot)) newest.set(r.slot, r);
  return [...newest.values()];
}

/** Among the newest per slot (newestPerSlot), the one of this size nearest in time of day. */
export function chooseAmong<R extends ReferenceCandidate>(newest: R[], minuteOfDay: number, width: number, height: number): Choice<R> {
  if (newest.length === 0) return { none: true };
  const sized = newest.filter((r) => r.width === width && r.height === height);
  if (sized.length === 0) {
    const sizes = new Map(newest.map((r) => [`${r.width}x${r.height}`, { width: r.width, height: r.height }]));
    return { otherSizes: [...sizes.values()] };
  }
  return { found: nearestInTimeOfDay(sized, minuteOfDay)! };
}

/** Of `refs`, the one nearest in time of day (round midnight), the newest of equals; null for none. */
export function nearestInTimeOfDay<R extends ReferenceCandidate>(refs: R[], minuteOfDay: number): R | null {
  const distance = (r: R) => timeOfDayDistance(r.minuteOfDay, minuteOfDay);
  return [...refs].sort((a, b) => distance(a) - distance(b) || b.createdAt - a.createdAt)[0] ?? null;
}
