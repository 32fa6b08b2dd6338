// One camera: its pictures, its alarm (armed or not, acknowledge, reset after repair) and the
// history of what operators did, the probability of its last checks as a chart, its state changes,
// its settings and ignore areas, its references per time-of-day slot, and what an operator does to
// it: a new reference from a file, delete; with a stream source also check now, re-baseline and the
// source's settings. A viewer sees the same camera with its settings read-only and no actions.
import { useRef, useState } from 'preact/hooks';
import { useFirstFocus } from '../components/first-focus.js';
import { ApiError, apiDelete, apiGet, apiPost, upload } from '../api.js';
import { ProbabilityChart } from '../components/chart.js';
import { ErrorNotice, Loading, UploadProgress } from '../components/notice.js';
import { LastCapturePicture, offlineReason } from '../components/capture.js';
import { Picture } from '../components/picture.js';
import { StateBadge, stateLabel } from '../components/state.js';
import { ago, percent, reasonText, when } from '../format.js';
import { setFlash } from '../flash.js';
import { usePoll } from '../poll.js';
import { useAllows } from '../role.js';
import { href } from '../route.js';
import type { CameraDetail, StateChange } from '../types.js';
import { AlarmCard, CameraHistory } from './camera-alarm.js';
import { CameraSettingsCard, SENSITIVITY } from './camera-settings.js';
import { CameraSettingsFacts } from './camera-settings-facts.js';
import { SourceFacts, SourceSettings } from './camera-source.js';
import { LiveStatus } from './cameras.js';

const CAMERA_POLL_MS = 5000;
/** State changes beside the pictures: the newest; the chart shows the rest. */
const SHOWN_CHANGES = 6;
/** Rows of the checks table beside the actions. */
const SHOWN_CHECKS = 12;

interface CameraView {
  camera: CameraDetail;
  changes: StateChange[];
}

/** The camera and its state changes (the newest 100, as the API keeps them). */
async function readCamera(id: string): Promise<CameraView> {
  const path = `/cameras/${encodeURIComponent(id)}`;
  const [{ camera }, { state_changes }] = await Promise.all([
    apiGet<{ camera: CameraDetail }>(path),
    apiGet<{ state_changes: StateChange[] }>(`${path}/state_changes`),
  ]);
  return { camera, changes: state_changes };
}

export function CameraPage({ id }: { id: string }) {
  const polled = usePoll(() => readCamera(id), CAMERA_POLL_MS, `camera:${id}`);
  const mayAct = useAllows('operator');
  const deleted = () => {
    setFlash(`Camera ${id} was deleted.`);
    location.hash = href.cameras();
  };
  const view = polled.data;
  const c = view?.camera;
  return (
    <main id="main" tabIndex={-1} class="page">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href.cameras()}>Cameras</a> › <span>{id}</span>
      </nav>
      <header class="page-head">
        <h1>
          {id} {c && <StateBadge state={c.state} />}
        </h1>
        <LiveStatus updatedAt={polled.updatedAt} failing={polled.error !== null} />
      </header>
      {polled.error && <ErrorNotice error={polled.error} title={c ? 'Not updated:' : 'Cannot load the camera:'} />}
      {!view && !polled.error && <Loading what="the camera" />}
      {c && view && (
        <>
          <section class="card summary-row" aria-label="State">
            <div>
              <p class="big-line">
                {stateLabel(c.state)} since {when(c.state_since)} <span class="muted">({ago(c.state_since)})</span>
              </p>
              {c.state === 'offline' && offlineReason(c) && <p class="reason">Stream: {reasonText(offlineReason(c))}</p>}
              <p>
                Last check:{' '}
                {c.last_check ? (
                  <>
                    <a href={href.kamcheck(c.last_check.job_id)}>{c.last_check.probability === null ? 'failed' : percent(c.last_check.probability)}</a>{' '}
                    <span class="muted">{when(c.last_check.finish_time)}</span>
                  </>
                ) : (
                  'none yet'
                )}
                {c.alarm_streak > 0 && (
                  <span class="muted">
                    {' '}
                    · {c.alarm_streak} check{c.alarm_streak === 1 ? '' : 's'} towards {c.state === 'tampered' ? 'clearing' : 'an alarm'}
                  </span>
                )}
              </p>
              <p class="muted">
                {c.reference_count} reference{c.reference_count === 1 ? '' : 's'} in {c.references.length} time-of-day slot{c.references.length === 1 ? '' : 's'} ·{' '}
                {c.checks.length} check{c.checks.length === 1 ? '' : 's'} on record
              </p>
              <section class="changes-box" aria-labelledby="changes-title">
                <h2 id="changes-title">State changes</h2>
                {view.changes.length === 0 ? (
                  <p class="muted">No change of state {c.source === undefined ? 'in the last checks' : 'on record'}.</p>
                ) : (
                  <ol class="changes">
                    {view.changes.slice(0, SHOWN_CHANGES).map((s) => (
                      <li key={`${s.at}-${s.to}`}>
                        {s.from && <StateBadge state={s.from} />} → <StateBadge state={s.to} /> <span>{when(s.at)}</span>
                        {s.job_id && (
                          <>
                            {' '}
                            · <a href={href.kamcheck(s.job_id)}>check</a>
                          </>
                        )}
                        {s.reason && <span class="muted"> · {reasonText(s.reason)}</span>}
                      </li>
                    ))}
                  </ol>
                )}
              </section>
            </div>
            <div class={c.source ? 'pictures two' : 'pictures'}>
              <Picture src={c.reference_image} alt={`Reference picture of ${c.camera} in use now`} caption="Reference in use now" href={c.reference_image ?? undefined} />
              {c.source && <LastCapturePicture camera={c.camera} source={c.source} link />}
            </div>
          </section>

          <div class="two-columns alarm-row">
            <AlarmCard camera={c} onChanged={polled.reload} />
            <CameraHistory camera={c} />
          </div>

          <section class="card" aria-labelledby="chart-title">
            <h2 id="chart-title">Probability of the last checks</h2>
            {c.checks.length === 0 ? <p class="muted">No check yet: the chart starts with the first.</p> : <ProbabilityChart checks={c.checks} alarmLine={SENSITIVITY[c.settings.sensitivity].line} />}
          </section>

          <div class={mayAct ? 'two-columns' : undefined}>
            <section class="card" aria-labelledby="checks-title">
              <h2 id="checks-title">Last checks</h2>
              {c.checks.length === 0 ? (
                <p class="muted">None yet.</p>
              ) : (
                <div class="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Finished</th>
                        <th scope="col">Captured</th>
                        <th scope="col">Probability</th>
                        <th scope="col">State after</th>
                      </tr>
                    </thead>
                    <tbody>
                      {c.checks.slice(0, SHOWN_CHECKS).map((k) => (
                        <tr key={k.job_id}>
                          <td>
                            <a href={href.kamcheck(k.job_id)}>{when(k.finish_time)}</a>
                          </td>
                          <td>{when(k.captured_at)}</td>
                          <td>{k.success ? percent(k.probability) : <span class="failed-text">failed</span>}</td>
                          <td>
                            <StateBadge state={k.state} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
            {mayAct && <Actions camera={c} onChanged={polled.reload} onDeleted={deleted} />}
          </div>

          {c.source !== undefined && (mayAct ? <SourceSettings camera={c} onChanged={polled.reload} /> : <SourceFacts camera={c} />)}

          {mayAct ? <CameraSettingsCard camera={c} onChanged={polled.reload} /> : <CameraSettingsFacts camera={c} />}

          <section class="card" aria-labelledby="refs-title">
            <h2 id="refs-title">References per time of day</h2>
            <p class="muted">A check uses the newest reference of the slot nearest in time of day; older ones are kept for comparison.</p>
            <div class="slots">
              {c.references.map((slot) => (
                <div class="slot" key={slot.slot}>
                  <h3>{slot.slot}</h3>
                  <div class="slot-pictures">
                    {slot.references.map((r, i) => (
                      <Picture
                        key={r.reference_id}
                        src={r.image}
                        href={r.image}
                        alt={`Reference of ${c.camera} for ${slot.slot}, captured ${when(r.captured_at)}`}
                        caption={`${i === 0 ? 'Newest · ' : ''}${when(r.captured_at)} · ${referenceOrigin(r)}`}
                      />
                    ))}
                  </div>
                </div>
              ))}
            </div>
          </section>

        </>
      )}
    </main>
  );
}

function Actions({ camera: c, onChanged, onDeleted }: { camera: CameraDetail; onChanged: () => void; onDeleted: () => void }) {
  const path = `/cameras/${encodeURIComponent(c.camera)}`;
  const [error, setError] = useState<ApiError | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const confirmButton = useRef<HTMLButtonElement>(null);
  useFirstFocus(confirmButton, confirming);

  const run = async (what: () => Promise<string>, then = onChanged) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await what());
      then();
    } catch (err) {
      setError(err as ApiError);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };

  const setReference = (e: Event) => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const data = new FormData(formEl);
    const at = String(data.get('captured_at') ?? '');
    data.delete('captured_at');
    // datetime-local is the operator's local time: sent with its offset (as UTC).
    if (at) data.set('captured_at', new Date(at).toISOString());
    return run(async () => {
      await upload('PUT', `${path}/reference`, data, (sent, total) => setProgress({ sent, total }));
      formEl.reset();
      return 'The new reference is set.';
    });
  };

  return (
    <section class="card actions" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      {error && <ErrorNotice error={error} title="Not done:" />}
      {done && (
        <div class="notice notice-ok" role="status">
          {done}
        </div>
      )}
      <form class="stack" onSubmit={setReference} aria-label="Set a new reference from a file">
        <h3>Set a new reference from a file</h3>
        <label for="reference-image">Picture (JPEG or PNG, the camera's frame size)</label>
        <input id="reference-image" name="image" type="file" accept="image/jpeg,image/png" required />
        <label for="reference-time">Captured at (optional; picks the time-of-day slot, default now)</label>
        <input id="reference-time" name="captured_at" type="datetime-local" step={1} />
        {progress && <UploadProgress sent={progress.sent} total={progress.total} label="Uploading the picture" />}
        <button type="submit" disabled={busy}>
          Set reference
        </button>
      </form>
      {c.source && (
        <div class="stack">
          <h3>Stream</h3>
          <div class="button-row">
            <button type="button" disabled={busy} onClick={() => run(async () => (await apiPost(`${path}/check`), 'A check of the stream is queued.'))}>
              Check now
            </button>
            <button
              type="button"
              disabled={busy || !(c.source.picture || c.source.last_capture?.outcome === 'ok')}
              title={c.source.picture || c.source.last_capture?.outcome === 'ok' ? undefined : 'Needs a successful capture'}
              onClick={() => run(async () => (await apiPost(`${path}/reference/from_capture`), 'The last capture is the reference now.'))}
            >
              Make the last capture the reference
            </button>
          </div>
        </div>
      )}
      <div class="stack danger-zone">
        <h3>Delete the camera</h3>
        {!confirming ? (
          <button type="button" class="danger" disabled={busy} onClick={() => setConfirming(true)}>
            Delete camera…
          </button>
        ) : (
          <div class="confirm" role="alertdialog" aria-labelledby="confirm-text">
            <p id="confirm-text">
              Delete <strong>{c.camera}</strong> with its {c.reference_count} reference{c.reference_count === 1 ? '' : 's'} and its check history? A later
              check of this camera needs a reference again.
            </p>
            <div class="button-row">
              <button
                type="button"
                class="danger"
                disabled={busy}
                ref={confirmButton}
                onClick={() =>
                  run(async () => {
                    await apiDelete(path);
                    return 'Deleted.';
                  }, onDeleted)
                }
              >
                Yes, delete {c.camera}
              </button>
              <button type="button" onClick={() => setConfirming(false)}>
                Keep it
              </button>
            </div>
          </div>
        )}
      </div>
    </section>
  );
}

/** Where a reference came from, in words. */
function referenceOrigin(r: { origin?: string | null; source_job: string | null }): string {
  switch (r.origin) {
    case 'learned':
      return 'learned from the first capture';
    case 'capture':
      return 'set from a capture';
    case 'renewed':
      return 'renewed by a check';
    case 'uploaded':
      return r.source_job ? 'sent with a check' : 'set by hand';
    default:
      return r.source_job ? 'from a check' : 'set by hand';
  }
}
