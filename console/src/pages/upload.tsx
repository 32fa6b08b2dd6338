// Running a job from the console: a tamper check (`video`, `image`, optional `camera`) or a face
// log (`video` and its options), uploaded with progress, then followed until it is done and its
// result shown in place. A refused upload says why, in the API's words.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, apiGet, upload } from '../api.js';
import { ErrorNotice, UploadProgress } from '../components/notice.js';
import { bytes } from '../format.js';
import { href } from '../route.js';
import type { CameraSummary, FaceLogTask, KamcheckTask } from '../types.js';
import { FaceLogReview } from './face-log.js';
import { KamcheckResult } from './kamcheck-job.js';

const FOLLOW_MS = 1000;

type Phase<T> =
  | { step: 'idle' }
  | { step: 'uploading'; sent: number; total: number }
  | { step: 'running'; task: T }
  | { step: 'done'; task: T }
  | { step: 'refused'; error: ApiError };

/** Uploads the form, then reads the job until it is complete. */
function useJobUpload<T extends { job_id: string; complete: boolean }>(path: string) {
  const [phase, setPhase] = useState<Phase<T>>({ step: 'idle' });
  const submit = async (form: FormData) => {
    setPhase({ step: 'uploading', sent: 0, total: 0 });
    try {
      let { task } = await upload<{ task: T }>('POST', path, form, (sent, total) => setPhase({ step: 'uploading', sent, total }));
      while (!task.complete) {
        setPhase({ step: 'running', task });
        await new Promise((r) => setTimeout(r, FOLLOW_MS));
        task = (await apiGet<{ task: T }>(`${path}/${task.job_id}`)).task;
      }
      setPhase({ step: 'done', task });
    } catch (err) {
      setPhase({ step: 'refused', error: err instanceof ApiError ? err : new ApiError(0, 'error', String(err)) });
    }
  };
  return { phase, submit };
}

export function UploadPage({ kind }: { kind: 'kamcheck' | 'face_log' }) {
  return (
    <main id="main" tabIndex={-1} class="page narrow">
      <nav class="tabs" aria-label="Analytic">
        <a href={href.upload('kamcheck')} class={kind === 'kamcheck' ? 'tab active' : 'tab'} aria-current={kind === 'kamcheck' ? 'page' : undefined}>
          Tamper check
        </a>
        <a href={href.upload('face_log')} class={kind === 'face_log' ? 'tab active' : 'tab'} aria-current={kind === 'face_log' ? 'page' : undefined}>
          Face log
        </a>
      </nav>
      {kind === 'kamcheck' ? <KamcheckUpload /> : <FaceLogUpload />}
    </main>
  );
}

function Progress<T extends { message: string }>({ phase }: { phase: Phase<T> }) {
  if (phase.step === 'uploading') return <UploadProgress sent={phase.sent} total={phase.total} label={`Uploading ${phase.total ? bytes(phase.total) : ''}`} />;
  if (phase.step === 'running')
    return (
      <p class="running" role="status">
        <span class="spinner" aria-hidden="true" /> {phase.task.message}
      </p>
    );
  if (phase.step === 'refused') return <ErrorNotice error={phase.error} title="Not accepted:" />;
  return null;
}

function KamcheckUpload() {
  const { phase, submit } = useJobUpload<KamcheckTask>('/kamcheck');
  const [cameras, setCameras] = useState<string[]>([]);
  useEffect(() => {
    // Suggestions for the camera field; without them the field still takes any id.
    apiGet<{ cameras: CameraSummary[] }>('/cameras').then(
      (r) => setCameras(r.cameras.map((c) => c.camera)),
      () => {},
    );
  }, []);
  const busy = phase.step === 'uploading' || phase.step === 'running';
  const send = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    // Empty optional fields are left out, as a client would.
    if (!String(form.get('camera') ?? '').trim()) form.delete('camera');
    const image = form.get('image');
    if (image instanceof File && image.size === 0 && !image.name) form.delete('image');
    return submit(form);
  };
  return (
    <>
      <h1>Tamper check</h1>
      <p class="lede">
        A clip of up to 25 frames and a reference picture of the same camera and size. With a camera id, the appliance keeps the reference and the
        camera's state; a camera that has references needs no picture.
      </p>
      <form class="card grid-form" onSubmit={send} aria-label="Tamper check upload">
        <label for="kc-video">Clip (video, at most 25 frames)</label>
        <input id="kc-video" name="video" type="file" accept="video/*,.mp4,.avi,.mkv,.mov" required />
        <label for="kc-image">Reference picture (JPEG or PNG)</label>
        <input id="kc-image" name="image" type="file" accept="image/jpeg,image/png" />
        <label for="kc-camera">Camera id (optional)</label>
        <input id="kc-camera" name="camera" list="known-cameras" autocomplete="off" spellcheck={false} maxLength={128} />
        <datalist id="known-cameras">
          {cameras.map((c) => (
            <option key={c} value={c} />
          ))}
        </datalist>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Run the check'}
        </button>
      </form>
      <div aria-live="polite">
        <Progress phase={phase} />
        {phase.step === 'done' && <KamcheckResult task={phase.task} />}
      </div>
    </>
  );
}

function FaceLogUpload() {
  const { phase, submit } = useJobUpload<FaceLogTask>('/face_log');
  const busy = phase.step === 'uploading' || phase.step === 'running';
  const send = (e: Event) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLFormElement;
    const form = new FormData();
    const data = new FormData(el);
    form.set('video', data.get('video') as File);
    for (const flag of ['gender', 'track_thumbnails', 'blur']) form.set(flag, data.get(flag) === 'on' ? 'True' : 'False');
    for (const n of ['min_size', 'start_frame', 'max_frames']) {
      const v = String(data.get(n) ?? '').trim();
      if (v) form.set(n, v);
    }
    return submit(form);
  };
  return (
    <>
      <h1>Face log</h1>
      <p class="lede">A video (or a still image) of a pinch point: one sighting per person appearance, an overlay video, an XML of every face.</p>
      <form class="card grid-form" onSubmit={send} aria-label="Face log upload">
        <label for="fl-video">Video or image</label>
        <input id="fl-video" name="video" type="file" accept="video/*,image/jpeg,image/png,.mp4,.avi,.mkv,.mov" required />
        <fieldset>
          <legend>Options</legend>
          <label class="check">
            <input name="gender" type="checkbox" defaultChecked /> Classify gender
          </label>
          <label class="check">
            <input name="track_thumbnails" type="checkbox" /> Thumbnails of every track
          </label>
          <label class="check">
            <input name="blur" type="checkbox" /> Blur faces in the overlay
          </label>
          <div class="number-fields">
            <span>
              <label for="fl-min-size">Smallest face (px)</label>
              <input id="fl-min-size" name="min_size" type="number" min={30} step={1} placeholder="30" />
            </span>
            <span>
              <label for="fl-start">First frame</label>
              <input id="fl-start" name="start_frame" type="number" min={0} step={1} placeholder="0" />
            </span>
            <span>
              <label for="fl-max">Frames (0 = all)</label>
              <input id="fl-max" name="max_frames" type="number" min={0} step={1} placeholder="0" />
            </span>
          </div>
        </fieldset>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Working…' : 'Run the face log'}
        </button>
      </form>
      <div aria-live="polite">
        <Progress phase={phase} />
        {phase.step === 'done' && (
          <>
            <p>
              <a href={href.faceLog(phase.task.analytic, phase.task.job_id)}>Open this face log on its own page</a>
            </p>
            <FaceLogReview task={phase.task} />
          </>
        )}
      </div>
    </>
  );
}
