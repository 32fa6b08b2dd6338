// Dates as the API and the events it sends write them: the seed's tasks carry HTTP-dates, and so
// do the records the modules store and announce (camera state changes, sessions).

/** HTTP-date, e.g. `Sun, 22 Nov 2026 04:10:00 GMT`. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
