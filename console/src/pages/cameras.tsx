// Every camera at a glance, trouble first: its state in colour and words and since when, the last
// check's probability and causes, the reference picture beside the last capture (when the
// appliance captures the camera itself), counts per state. Updates itself every 5 s.
import { useState } from 'preact/hooks';
import { apiGet } from '../api.js';
import { CauseBars } from '../components/causes.js';
import { Empty, ErrorNotice, Loading } from '../components/notice.js';
import { LastCapturePicture, offlineReason } from '../components/capture.js';
import { Picture } from '../components/picture.js';
import { StateBadge, stateLabel } from '../components/state.js';
import { ago, percent, reasonText, when } from '../format.js';
import { takeFlash } from '../flash.js';
import { causesOf, loadCauses } from '../last-checks.js';
import { usePoll } from '../poll.js';
import { href } from '../route.js';
import type { CameraState, CameraSummary } from '../types.js';

export const CAMERAS_POLL_MS = 5000;
const ORDER: Record<CameraState, number> = { tampered: 0, offline: 1, ok: 2 };
const STATES: CameraState[] = ['tampered', 'offline', 'ok'];

async function readCameras(): Promise<CameraSummary[]> {
  const { cameras } = await apiGet<{ cameras: CameraSummary[] }>('/cameras');
  await loadCauses(cameras.flatMap((c) => (c.last_check && c.last_check.probability !== null ? [c.last_check.job_id] : [])));
  return cameras.sort((a, b) => (ORDER[a.state] ?? 3) - (ORDER[b.state] ?? 3) || a.camera.localeCompare(b.camera));
}

export function CamerasPage() {
  const polled = usePoll(readCameras, CAMERAS_POLL_MS, 'cameras');
  const [filter, setFilter] = useState<CameraState | 'all'>('all');
  const [flash] = useState(takeFlash);
  const cameras = polled.data;
  const counts = Object.fromEntries(STATES.map((s) => [s, cameras?.filter((c) => c.state === s).length ?? 0])) as Record<CameraState, number>;
  const shown = cameras?.filter((c) => filter === 'all' || c.state === filter) ?? [];
  const sources = cameras?.some((c) => c.source !== undefined) ?? false;
  return (
    <main id="main" tabIndex={-1} class="page">
      <header class="page-head">
        <h1>Cameras</h1>
        <LiveStatus updatedAt={polled.updatedAt} failing={polled.error !== null} />
      </header>
      {flash && (
        <div class="notice notice-ok" role="status">
          {flash}
        </div>
      )}
      {polled.error && <ErrorNotice error={polled.error} title={cameras ? 'Not updated:' : 'Cannot load the cameras:'} />}
      {!cameras && !polled.error && <Loading what="cameras" />}
      {cameras && cameras.length === 0 && (
        <Empty title="No cameras yet">
          <p>
            A camera appears here with its first reference picture: run a <a href={href.upload('kamcheck')}>tamper check</a> with its camera id and a
            reference image, or set one with <code>PUT /cameras/&lt;camera&gt;/reference</code>.
          </p>
        </Empty>
      )}
      {cameras && cameras.length > 0 && (
        <>
          <div class="filters" role="group" aria-label="Show cameras by state">
            <button type="button" class={filter === 'all' ? 'chip active' : 'chip'} aria-pressed={filter === 'all'} onClick={() => setFilter('all')}>
              All <b>{cameras.length}</b>
            </button>
            {STATES.filter((s) => s !== 'offline' || sources || counts.offline > 0).map((s) => (
              <button type="button" key={s} class={`chip chip-${s}${filter === s ? ' active' : ''}`} aria-pressed={filter === s} onClick={() => setFilter(s)} data-state={s}>
                {stateLabel(s)} <b>{counts[s]}</b>
              </button>
            ))}
          </div>
          {shown.length === 0 ? (
            <Empty title={`No camera is ${stateLabel(filter as CameraState).toLowerCase()}.`} />
          ) : (
            <ul class="camera-grid">
              {shown.map((c) => (
                <CameraCard key={c.camera} camera={c} />
              ))}
            </ul>
          )}
        </>
      )}
    </main>
  );
}

export function LiveStatus({ updatedAt, failing }: { updatedAt: Date | null; failing: boolean }) {
  if (!updatedAt) return null;
  return (
    <p class={failing ? 'live live-failing' : 'live'} aria-live="off">
      <span class="dot" aria-hidden="true" />
      {failing ? 'Not updating' : 'Live'} · updated {when(updatedAt.toUTCString())}
    </p>
  );
}

function CameraCard({ camera: c }: { camera: CameraSummary }) {
  const causes = c.last_check ? causesOf(c.last_check.job_id) : null;
  return (
    <li class={`camera-card state-${c.state}`} data-camera={c.camera} data-state={c.state}>
      <div class="camera-card-head">
        <h2>
          <a href={href.camera(c.camera)}>{c.camera}</a>
        </h2>
        <StateBadge state={c.state} />
      </div>
      <p class="since">
        {stateLabel(c.state)} since {when(c.state_since)} <span class="muted">({ago(c.state_since)})</span>
      </p>
      {c.state === 'offline' && offlineReason(c) && <p class="reason">Stream: {reasonText(offlineReason(c))}</p>}
      <div class={c.source ? 'pictures two' : 'pictures'}>
        <Picture src={c.reference_image} alt={`Reference picture of ${c.camera}`} caption="Reference" />
        {c.source && <LastCapturePicture camera={c.camera} source={c.source} />}
      </div>
      {c.last_check ? (
        <div class="last-check">
          <p>
            Last check <span class="muted">{when(c.last_check.finish_time)}</span>:{' '}
            {c.last_check.probability === null ? (
              <strong class="failed-text">failed</strong>
            ) : (
              <strong class={c.last_check.probability >= 50 ? 'probability high' : 'probability'}>{percent(c.last_check.probability)}</strong>
            )}
          </p>
          {causes && <CauseBars causes={causes} compact />}
        </div>
      ) : (
        <p class="muted">No check yet.</p>
      )}
    </li>
  );
}
