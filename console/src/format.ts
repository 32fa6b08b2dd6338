// How the console writes times, durations and numbers: the operator's own locale and time zone.

const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dateTime = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** An HTTP-date as the operator's local date and time; today's as the time alone. */
export function when(httpDate: string | null | undefined): string {
  if (!httpDate) return '—';
  const d = new Date(httpDate);
  if (Number.isNaN(d.getTime())) return httpDate;
  return d.toDateString() === new Date().toDateString() ? timeOnly.format(d) : dateTime.format(d);
}

const dateAlone = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

/** An HTTP-date's local date and its time of day apart, for a column that may wrap between them. */
export const dateOnly = (httpDate: string) => formatValid(dateAlone, httpDate);
export const timeOfDay = (httpDate: string) => formatValid(timeOnly, httpDate);

/** A date the browser cannot read stays as the appliance wrote it. */
function formatValid(format: Intl.DateTimeFormat, httpDate: string): string {
  const d = new Date(httpDate);
  return Number.isNaN(d.getTime()) ? httpDate : format.format(d);
}

/** An HTTP-date as the operator's local date and time, today's too (a record, not a live view). */
export function dateAndTime(httpDate: string | null | undefined): string {
  if (!httpDate) return '—';
  const d = new Date(httpDate);
  return Number.isNaN(d.getTime()) ? httpDate : dateTime.format(d);
}

/** "3 min ago", "2 h 5 min ago", "4 days ago". */
export function ago(httpDate: string | null | undefined, now = Date.now()): string {
  if (!httpDate) return '';
  const s = Math.max(0, Math.round((now - new Date(httpDate).getTime()) / 1000));
  if (s < 60) return 'just now';
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min ago`;
  return `${Math.floor(h / 24)} days ago`;
}

/** "3 min", "2 h 5 min", "4 days": how long since an HTTP date. */
export function standing(httpDate: string | null | undefined, now = Date.now()): string {
  const a = ago(httpDate, now);
  return a === 'just now' ? 'under a minute' : a.replace(/ ago$/, '');
}

/** Seconds as `m:ss.s` (or `h:mm:ss`). */
export function clock(seconds: number): string {
  const s = Math.max(0, seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  if (h > 0) return `${h}:${String(m).padStart(2, '0')}:${String(Math.floor(rest)).padStart(2, '0')}`;
  return `${m}:${rest.toFixed(1).padStart(4, '0')}`;
}

export const percent = (value: number | null | undefined) => (value === null || value === undefined ? '—' : `${Math.round(value)}%`);

/** The frame rate of a task's `resolution` (`1280x720@25.0fps`). */
export function frameRate(resolution: string | undefined): number {
  const m = /@([\d.]+)fps$/.exec(resolution ?? '');
  const fps = m ? Number(m[1]) : NaN;
  return Number.isFinite(fps) && fps > 0 ? fps : 25;
}

/** A stream failure's code (SourceFailureReason, or a check's error code) in words. */
const REASONS: Record<string, string> = {
  connection_refused: 'the camera refused the connection',
  timeout: 'the stream did not answer in time',
  authentication_failed: 'the camera refused the user name or password',
  not_found: 'the camera has no stream at that URL',
  unreachable: 'the camera cannot be reached',
  no_video_stream: 'the stream carries no video',
  stream_error: 'the stream could not be decoded',
  source_removed: 'the stream source was removed',
};

export const reasonText = (code: string | null | undefined): string => (code ? (REASONS[code] ?? code.replace(/_/g, ' ')) : '');

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(0)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
