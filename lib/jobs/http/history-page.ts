// History paging, as clients of the original service ask for it: `GET /<analytic>/<page>/<per_page>`
// or `?page=&per_page=` on the plain history path. Page 1 is the newest; a page past the end is
// an empty list. Without either, the plain path answers the seed's last HISTORY_SIZE tasks.
import type { Context } from 'koa';
import { invalidParameter } from '../../http/errors.js';

/** The seed's history size: the plain history paths answer the last 50 tasks. */
const HISTORY_SIZE = 50;
const MAX_PER_PAGE = 100;
/** Pages beyond this would skip more tasks than any store holds; larger numbers are typos. */
const MAX_PAGE = 1_000_000;

export interface HistoryPage {
  limit: number;
  offset: number;
}

/** The page a history request asks for, from its path parameters or its query string. */
export function historyPage(ctx: Context): HistoryPage {
  const params = (ctx.params ?? {}) as Record<string, string | undefined>;
  const page = params.page ?? queryValue(ctx, 'page');
  const perPage = params.per_page ?? queryValue(ctx, 'per_page');
  if (page === undefined && perPage === undefined) return { limit: HISTORY_SIZE, offset: 0 };
  const n = pageNumber('page', page, 1, MAX_PAGE, 1);
  const size = pageNumber('per_page', perPage, 1, MAX_PER_PAGE, HISTORY_SIZE);
  return { limit: size, offset: (n - 1) * size };
}

function queryValue(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw invalidParameter(`"${name}" was sent ${value.length} times`);
  return value;
}

function pageNumber(name: string, raw: string | undefined, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = raw.trim();
  if (!/^\d{1,7}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw invalidParameter(`"${name}" must be a whole number from ${min} to ${max}, got "${value.slice(0, 20)}"`);
  }
  return Number(value);
}
