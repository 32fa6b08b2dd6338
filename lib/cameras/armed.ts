// When a camera is armed: its weekly ranges read in its time zone. Outside them its checks still
// run and its state still moves, but an alarm is held back until the camera is armed again
// (alarm-workflow.ts announces the alarms that are still standing then).
import { WEEKDAYS, type ArmedRange, type Weekday } from './camera-settings.js';

/** Minutes since local midnight of "HH:MM" (00:00-24:00). */
export function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return h * 60 + m;
}

/** Whether `name` is a time zone this runtime knows (an IANA name such as Europe/Berlin). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();

/** The weekday and the minute of the day at `at` in `timeZone`. */
export function localWeekMinute(at: number, timeZone: string): { day: Weekday; minute: number } {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formats.set(timeZone, f);
  }
  const parts = Object.fromEntries(f.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  const day = parts.weekday.toLowerCase().slice(0, 3) as Weekday;
  return { day, minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

/** Whether the ranges arm the camera at `at`; no range at all means always armed. */
export function isArmed(ranges: ArmedRange[], timeZone: string, at: number): boolean {
  if (ranges.length === 0) return true;
  const { day, minute } = localWeekMinute(at, timeZone);
  const yesterday = WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7];
  return ranges.some((r) => {
    const from = minutesOf(r.from);
    const to = minutesOf(r.to);
    if (from < to) return r.days.includes(day) && minute >= from && minute < to;
    // past midnight (or all day for from = to): the evening of a listed day, the morning after it
    return (r.days.includes(day) && minute >= from) || (r.days.includes(yesterday) && minute < to);
  });
}
