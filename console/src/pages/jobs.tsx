// The history of both analytics, newest first, 20 a page (GET /kamcheck/<page>/<per_page> and
// GET /face_detect/<page>/<per_page>, the face logs' history). Page 1 updates itself.
import { JobProgressBar } from '../components/progress.js';
import { apiGet } from '../api.js';
import { topCause } from '../components/causes.js';
import { Empty, ErrorNotice, Loading } from '../components/notice.js';
import { TaskStatus } from '../components/state.js';
import { percent, when } from '../format.js';
import { usePoll } from '../poll.js';
import { useAllows } from '../role.js';
import { href } from '../route.js';
import type { FaceLogTask, KamcheckTask } from '../types.js';
import { LiveStatus } from './cameras.js';

export const PER_PAGE = 20;
const HISTORY = { kamcheck: '/kamcheck', face_log: '/face_detect' };

interface HistoryPage<T> {
  tasks: T[];
  /** Whether an older page has tasks. */
  older: boolean;
}

async function readPage<T>(kind: 'kamcheck' | 'face_log', number: number): Promise<HistoryPage<T>> {
  const base = HISTORY[kind];
  const { tasks } = await apiGet<{ tasks: T[] }>(`${base}/${number}/${PER_PAGE}`);
  // The API counts nothing: the first task of the next page, read as a page of one, tells.
  const older = tasks.length === PER_PAGE && (await apiGet<{ tasks: T[] }>(`${base}/${number * PER_PAGE + 1}/1`)).tasks.length > 0;
  return { tasks, older };
}

export function JobsPage({ kind, number }: { kind: 'kamcheck' | 'face_log'; number: number }) {
  const polled = usePoll(() => readPage<KamcheckTask & FaceLogTask>(kind, number), number === 1 ? 5000 : 0, `${kind}:${number}`);
  const page = polled.data;
  const mayAct = useAllows('operator');
  return (
    <main id="main" tabIndex={-1} class="page">
      <header class="page-head">
        <h1>Jobs</h1>
        {number === 1 && <LiveStatus updatedAt={polled.updatedAt} failing={polled.error !== null} />}
      </header>
      <nav class="tabs" aria-label="Analytic">
        <a href={href.jobs('kamcheck')} class={kind === 'kamcheck' ? 'tab active' : 'tab'} aria-current={kind === 'kamcheck' ? 'page' : undefined}>
          Tamper checks
        </a>
        <a href={href.jobs('face_log')} class={kind === 'face_log' ? 'tab active' : 'tab'} aria-current={kind === 'face_log' ? 'page' : undefined}>
          Face logs
        </a>
      </nav>
      {polled.error && <ErrorNotice error={polled.error} title="Cannot load the jobs:" />}
      {!page && !polled.error && <Loading what="the jobs" />}
      {page && page.tasks.length === 0 && (
        <Empty title={number === 1 ? 'No jobs yet' : 'No older jobs'}>
          {number === 1 && !mayAct ? (
            <p>Jobs sent by the VMS or by an operator show here.</p>
          ) : number === 1 ? (
            <p>
              Jobs sent by the VMS or from the <a href={href.upload(kind)}>{kind === 'kamcheck' ? 'tamper check' : 'face log'} page</a> show here.
            </p>
          ) : (
            <p>
              <a href={href.jobs(kind)}>Back to the newest</a>
            </p>
          )}
        </Empty>
      )}
      {page && page.tasks.length > 0 && (
        <div class="card">
          <div class="table-wrap">{kind === 'kamcheck' ? <KamcheckTable tasks={page.tasks} /> : <FaceLogTable tasks={page.tasks} />}</div>
        </div>
      )}
      {page && (number > 1 || page.older) && (
        <nav class="pager" aria-label="Pages">
          {number > 1 ? (
            <a class="button" href={href.jobs(kind, number - 1)} rel="prev">
              ← Newer
            </a>
          ) : (
            <span class="button disabled" aria-disabled="true">
              ← Newer
            </span>
          )}
          <span class="page-number">Page {number}</span>
          {page.older ? (
            <a class="button" href={href.jobs(kind, number + 1)} rel="next">
              Older →
            </a>
          ) : (
            <span class="button disabled" aria-disabled="true">
              Older →
            </span>
          )}
        </nav>
      )}
    </main>
  );
}

function KamcheckTable({ tasks }: { tasks: KamcheckTask[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Submitted</th>
          <th scope="col">Status</th>
          <th scope="col">Probability</th>
          <th scope="col">Main cause</th>
          <th scope="col">Camera</th>
        </tr>
      </thead>
      <tbody>
        {tasks.map((t) => (
          <tr key={t.job_id}>
            <td>
              <a href={href.kamcheck(t.job_id)}>{when(t.start_time)}</a>
            </td>
            <td>
              <TaskStatus complete={t.complete} success={t.success} message={t.message} />
            </td>
            <td class={t.probability !== undefined && t.probability >= 50 ? 'num high' : 'num'}>{t.success ? percent(t.probability) : '—'}</td>
            <td>{t.success ? (topCause(t.causes) ?? 'none') : <span class="muted">{t.error?.message ?? t.message}</span>}</td>
            <td>{t.camera ? <a href={href.camera(t.camera)}>{t.camera}</a> : <span class="muted">—</span>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function FaceLogTable({ tasks }: { tasks: FaceLogTask[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Submitted</th>
          <th scope="col">Status</th>
          <th scope="col">Input</th>
          <th scope="col">Sightings</th>
          <th scope="col">Frames</th>
        </tr>
      </thead>
      <tbody>
        {tasks.map((t) => (
          <tr key={t.job_id}>
            <td>
              <a href={href.faceLog(t.analytic, t.job_id)}>{when(t.start_time)}</a>
            </td>
            <td>
              <TaskStatus complete={t.complete} success={t.success} message={t.message} />
              {t.progress && <JobProgressBar progress={t.progress} compact />}
            </td>
            <td class="ellipsis" title={t.input_video}>
              {t.input_video ?? '—'}
              {t.analytic === 'face_log_image' && <span class="muted"> (image)</span>}
            </td>
            <td class="num">{t.complete && t.success ? (t.number_of_sightings ?? t.sightings?.length ?? 0) : '—'}</td>
            <td class="num">{t.frames_processed ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
