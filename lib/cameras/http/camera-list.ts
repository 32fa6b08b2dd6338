// GET /cameras: every camera, or a page of them for a console at a site's scale: filtered by state
// (or unacknowledged alarms) and by a search in the id, ordered by id or by what needs attention
// (unacknowledged alarms first, the longest standing first), with the counts per state. The
// answer carries an ETag: a poll of an unchanged page is a 304 without a body.
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { seesCamera } from '../../users/roles.js';
import { invalidParameter } from '../../http/errors.js';
import type { CameraRecord, CameraState } from '../camera-records.js';
import { allCurrentReferences, currentReference, pictureLinks } from './camera-detail.js';
import type { CameraHttp } from './camera-http.js';
import { presentCamera } from './camera-view.js';

export const MAX_PER_PAGE = 200;
const FILTERS = ['ok', 'tampered', 'offline', 'unacknowledged'] as const;
type Filter = (typeof FILTERS)[number];

interface ListQuery {
  state: Filter | null;
  search: string | null;
  order: 'id' | 'attention';
  /** Null: every camera that matches. */
  page: { number: number; size: number } | null;
}

/** An alarm nobody has acknowledged yet. */
const unacknowledged = (c: CameraRecord) => c.state === 'tampered' && c.acknowledgement === null;

/** 0 an unacknowledged alarm, 1 an acknowledged one, 2 offline, 3 ok. */
function attentionRank(c: CameraRecord): number {
  if (c.state === 'tampered') return c.acknowledgement === null ? 0 : 1;
  return c.state === 'offline' ? 2 : 3;
}

function byAttention(a: CameraRecord, b: CameraRecord): number {
  const rank = attentionRank(a) - attentionRank(b);
  if (rank !== 0) return rank;
  // trouble that has stood longest first; ok cameras by name
  if (attentionRank(a) < 3 && a.stateSince !== b.stateSince) return a.stateSince - b.stateSince;
  return a.id.localeCompare(b.id);
}

function whole(ctx: Context, name: string, min: number, max: number): number | null {
  const raw = ctx.query[name];
  if (raw === undefined) return null;
  const n = typeof raw === 'string' && /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) throw invalidParameter(`"${name}" must be a whole number from ${min} to ${max}`);
  return n;
}

function readListQuery(ctx: Context): ListQuery {
  const state = ctx.query.state;
  if (state !== undefined && !(typeof state === 'string' && (FILTERS as readonly string[]).includes(state))) {
    throw invalidParameter(`"state" must be one of ${FILTERS.map((f) => `"${f}"`).join(', ')}`);
  }
  const search = ctx.query.q;
  if (search !== undefined && (typeof search !== 'string' || search.length > 200)) throw invalidParameter('"q" must be text of at most 200 characters');
  const order = ctx.query.order ?? 'id';
  if (order !== 'id' && order !== 'attention') throw invalidParameter('"order" must be "id" or "attention"');
  const page = whole(ctx, 'page', 1, 1_000_000);
  const size = whole(ctx, 'per_page', 1, MAX_PER_PAGE);
  return {
    state: (state as Filter | undefined) ?? null,
    search: search ? search.trim().toLowerCase() : null,
    order,
    page: page !== null || size !== null ? { number: page ?? 1, size: size ?? 50 } : null,
  };
}

export async function listCameras(deps: CameraHttp, ctx: Context): Promise<void> {
  const query = readListQuery(ctx);
  // a user or key limited to some cameras sees those only, in the list and its counts
  const all = (await deps.cameras.list()).filter((c) => seesCamera(ctx.state.principal, c.id));
  const counts = { ok: 0, tampered: 0, offline: 0, unacknowledged: 0 };
  for (const c of all) {
    counts[c.state as CameraState]++;
    if (unacknowledged(c)) counts.unacknowledged++;
  }
  let matching = all.filter(
    (c) =>
      (query.state === null || (query.state === 'unacknowledged' ? unacknowledged(c) : c.state === query.state)) &&
      (query.search === null || c.id.toLowerCase().includes(query.search)),
  );
  if (query.order === 'attention') matching = matching.sort(byAttention);
  const shown = query.page ? matching.slice((query.page.number - 1) * query.page.size, query.page.number * query.page.size) : matching;
  // a page reads its own cameras' sources and references only (MAX_PER_PAGE of them at most)
  const ids = query.page ? shown.map((c) => c.id) : null;
  const [sources, references] = await Promise.all([ids ? deps.sources.of(ids) : deps.sources.all(), allCurrentReferences(deps, ids)]);
  const links = pictureLinks(deps, ctx);
  const now = Date.now();
  const body = {
    status: 'success',
    cameras: shown.map((c) => {
      const source = sources.get(c.id) ?? null;
      return presentCamera(c, { source, currentReference: currentReference(references.get(c.id) ?? [], source, now) }, links);
    }),
    total: matching.length,
    counts,
  };
  // the links in it change on the hour only (pictureLinks), so an unchanged list has the same tag
  const text = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.set('ETag', etag);
  // the origin server's own test of If-None-Match (RFC 9110 13.1.2): koa's ctx.fresh also says no
  // to a request with Cache-Control: no-cache, which fetch() adds to every conditional request
  if (matches(ctx.get('if-none-match'), etag)) {
    ctx.status = 304;
    return;
  }
  ctx.type = 'application/json';
  ctx.body = text;
}

/** Whether an If-None-Match header names the tag (weakly, as GET compares). */
function matches(header: string, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}
