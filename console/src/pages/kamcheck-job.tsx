// A tamper check's result: the probability and its causes, the camera and reference it was
// checked against (and the second opinion of an older one), or why it failed. Polled until it is
// complete.
import { apiGet } from '../api.js';
import { CauseBars } from '../components/causes.js';
import { ErrorNotice, Loading } from '../components/notice.js';
import { TaskStatus } from '../components/state.js';
import { percent, when } from '../format.js';
import { usePoll } from '../poll.js';
import { href } from '../route.js';
import type { KamcheckTask } from '../types.js';

export function KamcheckJobPage({ jobId }: { jobId: string }) {
  const polled = usePoll(() => apiGet<{ task: KamcheckTask }>(`/kamcheck/${encodeURIComponent(jobId)}`).then((r) => r.task), 2000, `kamcheck:${jobId}`, (task) => task.complete);
  const t = polled.data;
  return (
    <main id="main" tabIndex={-1} class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.jobs('kamcheck')}>Tamper checks</a> › <span>{jobId}</span>
      </nav>
      <h1>Tamper check</h1>
      {polled.error && !t && <ErrorNotice error={polled.error} title="Cannot load the check:" />}
      {!t && !polled.error && <Loading what="the check" />}
      {t && <KamcheckResult task={t} />}
    </main>
  );
}

export function KamcheckResult({ task: t }: { task: KamcheckTask }) {
  return (
    <section class="card result" aria-label="Result of the tamper check" data-job={t.job_id}>
      <div class="result-head">
        <TaskStatus complete={t.complete} success={t.success} message={t.message} />
        {t.complete && t.success && t.probability !== undefined && (
          <p class={t.probability >= 50 ? 'probability-big high' : 'probability-big'}>
            {percent(t.probability)}
            <span class="probability-caption">probability of tampering</span>
          </p>
        )}
        <p class="message">{t.message}</p>
      </div>
      {t.complete && !t.success && t.error && (
        <div class="notice notice-error" role="alert">
          {t.error.message} <span class="muted">({t.error.code})</span>
        </div>
      )}
      {t.causes && (
        <>
          <h2>Causes</h2>
          <CauseBars causes={t.causes} notJudged={t.not_judged} />
          {t.not_counted && t.not_counted.length > 0 && (
            <p class="muted">
              The picture is too dark to judge and its camera does not count darkness as tampering: no cause counts, the probability is 0.
            </p>
          )}
        </>
      )}
      <dl class="facts">
        {t.camera && (
          <>
            <dt>Camera</dt>
            <dd>
              <a href={href.camera(t.camera)}>{t.camera}</a>
            </dd>
          </>
        )}
        {t.reference && (
          <>
            <dt>Reference</dt>
            <dd>
              slot {t.reference.slot}, captured {when(t.reference.captured_at)}
            </dd>
          </>
        )}
        {t.second_opinion && (
          <>
            <dt>Second opinion</dt>
            <dd class="second-opinion">
              {percent(t.second_opinion.first_probability)} against the reference above, which the appliance renewed;{' '}
              {percent(t.second_opinion.probability)} against the one before it (captured {when(t.second_opinion.reference.captured_at)}).{' '}
              {t.second_opinion.reference_set_aside
                ? 'The renewed reference kept something passing and was set aside: the result is the older one’s.'
                : 'Both say so: the result stands.'}
            </dd>
          </>
        )}
        <dt>Submitted</dt>
        <dd>{when(t.start_time)}</dd>
        {t.finish_time && (
          <>
            <dt>Finished</dt>
            <dd>{when(t.finish_time)}</dd>
          </>
        )}
        <dt>Job</dt>
        <dd>
          <a href={href.kamcheck(t.job_id)}>
            <code>{t.job_id}</code>
          </a>
        </dd>
      </dl>
    </section>
  );
}
