// Result downloads: GET /results/<job_id>/<expires>.<sig>/<file>, and the earlier form
// GET /results/<job_id>/<file>?expires=&sig= (result-links.ts). Open with the Basic header or with a
// link's valid signature (signedResultLink, which the HTTP app's authentication asks). After the retention period: 410.
// Byte ranges are served so a browser can seek in the overlay video.
import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ApiError, notFound } from '../../http/errors.js';
import { parseLinkToken, RESULTS_PATH, type ResultLinks } from '../../http/result-links.js';
import { resultsExpireAt } from '../retention.js';
import type { JobHttp } from './job-http.js';

/**
 * A plain file name (no path, no leading dot): only files an analytic wrote into the job's results
 * folder can be found, whatever their names.
 */
const RESULT_FILE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/;
const JOB_ID = /^[0-9a-f-]{36}$/;

const CONTENT_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.xml': 'application/xml; charset=utf-8',
  '.jpg': 'image/jpeg',
};

export const expired = () => new ApiError(410, 'expired', 'the result files of this job have expired and were deleted');

export function resultRoutes(router: Router, deps: Pick<JobHttp, 'jobs' | 'now' | 'resultsDir' | 'resultTtlMs'>): void {
  const serve = async (ctx: Context) => {
    const { jobId, file, token } = ctx.params as { jobId: string; file: string; token?: string };
    if (!JOB_ID.test(jobId) || !RESULT_FILE.test(file)) throw notFound(`no result file ${file}`);
    // With the Basic header the token is not needed, but a segment that is no token is no link of ours.
    if (token !== undefined && !parseLinkToken(token)) throw notFound(`no result file ${token}/${file}`);
    const job = await deps.jobs.get(jobId);
    if (!job || job.state !== 'done') throw notFound(`no results for job ${jobId}`);
    if (deps.now() >= resultsExpireAt(job.finishedAt ?? job.createdAt, deps.resultTtlMs)) throw expired();
    const full = path.join(deps.resultsDir, jobId, file);
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(full);
    } catch {
      throw notFound(`no result file ${file} for job ${jobId}`);
    }
    ctx.set('Content-Type', CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream');
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Cache-Control', 'private, max-age=3600');
    const range = parseRange(ctx.get('range'), stat.size);
    if (range === 'unsatisfiable') {
      ctx.set('Content-Range', `bytes */${stat.size}`);
      throw new ApiError(416, 'range_not_satisfiable', `the file has ${stat.size} bytes`);
    }
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${stat.size}`);
      ctx.length = range.end - range.start + 1;
      ctx.body = fs.createReadStream(full, range);
    } else {
      ctx.length = stat.size;
      ctx.body = fs.createReadStream(full);
    }
  };
  router.get(`${RESULTS_PATH}/:jobId/:token/:file`, serve);
  router.get(`${RESULTS_PATH}/:jobId/:file`, serve);
}

/** A single `bytes=a-b`, `bytes=a-` or `bytes=-n` range; anything else is served whole. */
function parseRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return 'unsatisfiable';
  return { start, end };
}

/**
 * A GET of a result file whose link carries a valid signature needs no Basic header: in the path
 * (`/results/<job_id>/<expires>.<sig>/<file>`) or, in links of the earlier form, in the query.
 */
export function signedResultLink(ctx: Context, links: ResultLinks): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  // Expiry is the retention period's end: the route answers 410 after it, signature or not.
  const inPath = new RegExp(`^${RESULTS_PATH}/([^/]+)/([^/]+)/[^/]+$`).exec(ctx.path);
  if (inPath) {
    const token = parseLinkToken(inPath[2]);
    return token !== null && links.verify(inPath[1], token.expires, token.sig);
  }
  const m = new RegExp(`^${RESULTS_PATH}/([^/]+)/[^/]+$`).exec(ctx.path);
  if (!m) return false;
  const { expires, sig } = ctx.query;
  return links.verify(m[1], typeof expires === 'string' ? expires : undefined, typeof sig === 'string' ? sig : undefined);
}
