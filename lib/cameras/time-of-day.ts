// A camera's references are kept per slot of the day (REFERENCE_SLOT_MINUTES), in the appliance's
// time zone (TZ): a scene at 03:00 looks like other nights, not like the afternoon. A check
// without a reference image uses the reference nearest in time of day, round midnight included.

export const MINUTES_PER_DAY = 1440;

/** Minutes since local midnight (fractional: seconds count), in the process's TZ. */
export function minuteOfDay(ms: number): number {
  const d = new Date(ms);
  return d.getHours() * 60 + d.getMinutes() + d.getSeconds() / 60;
}

/** The slot a moment falls in: 0 for the first REFERENCE_SLOT_MINUTES after midnight. */
export function slotOf(ms: number, slotMinutes: number): number {
  return Math.floor(minuteOfDay(ms) / slotMinutes);
}

/** A slot as the API shows it: `"14:00-15:00"`; the last slot of a day ends at `24:00`. */
export function slotLabel(slot: number, slotMinutes: number): string {
  const start = slot * slotMinutes;
  const end = Math.min(MINUTES_PER_DAY, start + slotMinutes);
  return `${clock(start)}-${clock(end)}`;
}

function clock(minutes: number): string {
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/** Distance between two times of day in minutes, going round midnight when that is shorter. */
export function timeOfDayDistance(a: number, b: number): number {
  const d = Math.abs(a - b) % MINUTES_PER_DAY;
  return Math.min(d, MINUTES_PER_DAY - d);
}

/**
 * Reads a `captured_at` field: an ISO 8601 date and time (without an offset it is local time, TZ)
 * or an HTTP-date. Null when it is neither.
 */
export function parseCapturedAt(text: string): number | null {
  const t = text.trim();
  const iso = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;
  const httpDate = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
  let ms: number;
  if (iso.test(t)) ms = Date.parse(t.replace(' ', 'T'));
  else if (httpDate.test(t)) ms = Date.parse(t);
  else return null;
  return Number.isFinite(ms) ? ms : null;
}
