// Every camera at a glance, trouble first: unacknowledged alarms, then acknowledged ones, then
// offline cameras (each the longest standing first), then the rest by name; each card with its
// state in colour and words and for how long, the last check's probability and causes, and small
// pictures (the reference beside the last capture). Built for a site's scale: the appliance
// answers a page of cards at a time (searched by id, filtered by state), the pictures are
// thumbnails loaded as their cards come into view, and the poll every 5 s moves bytes only when
// something on the page changed (the list's ETag: the browser revalidates, an unchanged page is a
// 304).
import { useEffect, useState } from 'preact/hooks';
import { apiGet } from '../api.js';
import { CauseBars } from '../components/causes.js';
import { Empty, ErrorNotice, Loading } from '../components/notice.js';
import { LastCapturePicture, offlineReason } from '../components/capture.js';
import { Picture } from '../components/picture.js';
import { StateBadge, stateLabel } from '../components/state.js';
import { ago, percent, reasonText, standing, when } from '../format.js';
import { takeFlash } from '../flash.js';
import { causesOf, loadCauses } from '../last-checks.js';
import { usePoll } from '../poll.js';
import { useAllows } from '../role.js';
import { href } from '../route.js';
import type { CameraState, CameraSummary } from '../types.js';

export const CAMERAS_POLL_MS = 5000;
/** Cards per page: a screenful or two, so a first view costs a few dozen thumbnails at most. */
export const CAMERAS_PER_PAGE = 24;
/** How long typing rests before the search asks the appliance. */
const SEARCH_PAUSE_MS = 300;

type Filter = CameraState | 'unacknowledged' | 'all';
const FILTERS: { filter: Exclude<Filter, 'all'>; label: string }[] = [
  { filter: 'unacknowledged', label: 'Not acknowledged' },
  { filter: 'tampered', label: 'Tampered' },
  { filter: 'offline', label: 'Offline' },
  { filter: 'ok', label: 'OK' },
];

interface CameraPage {
  cameras: CameraSummary[];
  total: number;
  counts: Record<CameraState | 'unacknowledged', number>;
}

async function readCameras(filter: Filter, search: string, page: number): Promise<CameraPage> {
  const query = new URLSearchParams({ order: 'attention', page: String(page), per_page: String(CAMERAS_PER_PAGE) });
  if (filter !== 'all') query.set('state', filter);
  if (search) query.set('q', search);
  const answer = await apiGet<CameraPage>(`/cameras?${query}`);
  await loadCauses(answer.cameras.flatMap((c) => (c.last_check && c.last_check.probability !== null ? [c.last_check.job_id] : [])));
  return answer;
}

export function CamerasPage() {
  const [filter, setFilter] = useState<Filter>('all');
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  useEffect(() => {
    const t = setTimeout(() => setSearch(typed.trim()), SEARCH_PAUSE_MS);
    return () => clearTimeout(t);
  }, [typed]);
  useEffect(() => setPage(1), [filter, search]);
  const polled = usePoll(() => readCameras(filter, search, page), CAMERAS_POLL_MS, `cameras:${filter}:${search}:${page}`);
  const [flash] = useState(takeFlash);
  const mayAct = useAllows('operator');
  const data = polled.data;
  const counts = data?.counts;
  const all = counts ? counts.ok + counts.tampered + counts.offline : 0;
  const pages = data ? Math.max(1, Math.ceil(data.total / CAMERAS_PER_PAGE)) : 1;
  const first = (page - 1) * CAMERAS_PER_PAGE;
  const sources = data?.cameras.some((c) => c.source) ?? false;
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
      {polled.error && <ErrorNotice error={polled.error} title={data ? 'Not updated:' : 'Cannot load the cameras:'} />}
      {!data && !polled.error && <Loading what="cameras" />}
      {data && all === 0 && (
        <Empty title="No cameras yet">
          {mayAct ? (
            <p>
              A camera appears here with its first reference picture: run a <a href={href.upload('kamcheck')}>tamper check</a> with its camera id and a
              reference image, or set one with <code>PUT /cameras/&lt;camera&gt;/reference</code>.
            </p>
          ) : (
            <p>A camera appears here with its first reference picture, once an operator or the VMS has set one.</p>
          )}
        </Empty>
      )}
      {data && counts && all > 0 && (
        <>
          <div class="list-tools">
            <div class="filters" role="group" aria-label="Show cameras by state">
              <button type="button" class={filter === 'all' ? 'chip active' : 'chip'} aria-pressed={filter === 'all'} onClick={() => setFilter('all')}>
                All <b>{all}</b>
              </button>
              {FILTERS.filter((f) => f.filter !== 'offline' || sources || counts.offline > 0).map((f) => (
                <button
                  type="button"
                  key={f.filter}
                  class={`chip chip-${f.filter === 'unacknowledged' ? 'tampered' : f.filter}${filter === f.filter ? ' active' : ''}`}
                  aria-pressed={filter === f.filter}
                  onClick={() => setFilter(f.filter)}
                  data-state={f.filter}
                >
                  {f.label} <b>{counts[f.filter]}</b>
                </button>
              ))}
            </div>
            <label class="search">
              <span class="visually-hidden">Search cameras by id</span>
              <input type="search" placeholder="Search by camera id" value={typed} onInput={(e) => setTyped((e.currentTarget as HTMLInputElement).value)} />
            </label>
          </div>
          {data.cameras.length === 0 ? (
            <Empty title={search ? `No camera matches "${search}".` : `No camera is ${filter === 'unacknowledged' ? 'waiting for acknowledgement' : stateLabel(filter as CameraState).toLowerCase()}.`} />
          ) : (
            <>
              <ul class="camera-grid">
                {data.cameras.map((c) => (
                  <CameraCard key={c.camera} camera={c} />
                ))}
              </ul>
              {pages > 1 && (
                <nav class="pager" aria-label="Pages of cameras">
                  <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                    ‹ Previous
                  </button>
                  <span>
                    Cameras {first + 1}–{first + data.cameras.length} of {data.total}
                  </span>
                  <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
                    Next ›
                  </button>
                </nav>
              )}
            </>
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
  const ack = c.acknowledgement;
  return (
    <li class={`camera-card state-${c.state}${c.state === 'tampered' && !ack ? ' unacknowledged' : ''}`} data-camera={c.camera} data-state={c.state}>
      <div class="camera-card-head">
        <h2>
          <a href={href.camera(c.camera)}>{c.camera}</a>
        </h2>
        <StateBadge state={c.state} />
      </div>
      <p class="since">
        {c.state === 'ok' ? (
          <>
            {stateLabel(c.state)} since {when(c.state_since)} <span class="muted">({ago(c.state_since)})</span>
          </>
        ) : (
          <>
            <strong>
              {stateLabel(c.state)} for {standing(c.state_since)}
            </strong>{' '}
            <span class="muted">since {when(c.state_since)}</span>
          </>
        )}
      </p>
      {c.state === 'tampered' &&
        (ack ? (
          <p class="ack" title={ack.comment ?? undefined}>
            Acknowledged by {ack.acknowledged_by} {ago(ack.acknowledged_at)}
            {ack.comment && <span class="muted"> · {ack.comment}</span>}
          </p>
        ) : (
          <p class="ack ack-missing">Not acknowledged</p>
        ))}
      {c.state === 'offline' && offlineReason(c) && <p class="reason">Stream: {reasonText(offlineReason(c))}</p>}
      <div class={c.source ? 'pictures two' : 'pictures'}>
        <Picture src={c.reference_thumbnail ?? c.reference_image} alt={`Reference picture of ${c.camera}`} caption="Reference" lazy />
        {c.source && <LastCapturePicture camera={c.camera} source={c.source} small />}
      </div>
      {c.last_check ? (
        <div class="last-check">
          <p>
            Last check <span class="muted">{when(c.last_check.finish_time)}</span>:{' '}
            {c.last_check.probability === null ? (
              <strong class="failed-text">failed</strong>
            ) : (
              <strong class={c.last_check.probability >= (c.tampered_at ?? 50) ? 'probability high' : 'probability'}>{percent(c.last_check.probability)}</strong>
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
