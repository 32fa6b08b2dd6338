// A camera's stream source (once the appliance captures cameras itself): the URL (its password
// never shown back), the check interval, whether checks run, and when the next one is; a form
// for an operator, the values alone for a viewer.
import { useState } from 'preact/hooks';
import { ApiError, apiPutJson } from '../api.js';
import { ErrorNotice } from '../components/notice.js';
import { reasonText, when } from '../format.js';
import type { CameraDetail } from '../types.js';

/** The API's smallest interval (SPEC: check_interval_s >= 10). */
const MIN_INTERVAL_S = 10;

/** The source's state in a line: how often it is checked and when next, or why not. */
function SourceLine({ camera: c }: { camera: CameraDetail }) {
  const source = c.source ?? null;
  if (!source) return <p class="muted">The appliance does not capture this camera itself: the VMS sends its clips.</p>;
  return (
    <p class="muted">
      {source.enabled ? `Checked every ${source.check_interval_s} s; next check ${when(source.next_check_at)}.` : 'Checks are paused.'}
      {source.last_capture?.outcome === 'failed' && source.last_capture.reason && ` Last capture failed: ${reasonText(source.last_capture.reason)}.`}
    </p>
  );
}

/** A viewer's look at the source: nothing at all for a camera without one, the VMS's own. */
export function SourceFacts({ camera: c }: { camera: CameraDetail }) {
  if (!c.source) return null;
  return (
    <section class="card" aria-labelledby="source-title">
      <h2 id="source-title">Stream source</h2>
      <SourceLine camera={c} />
      <dl class="facts">
        <dt>Stream URL</dt>
        <dd>
          <code>{c.source.url}</code>
        </dd>
      </dl>
    </section>
  );
}

export function SourceSettings({ camera: c, onChanged }: { camera: CameraDetail; onChanged: () => void }) {
  const source = c.source ?? null;
  const [error, setError] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await apiPutJson(`/cameras/${encodeURIComponent(c.camera)}`, {
        source_url: String(form.get('source_url') ?? ''),
        check_interval_s: Number(form.get('check_interval_s')),
        enabled: form.get('enabled') === 'on',
      });
      setSaved(true);
      onChanged();
    } catch (err) {
      setError(err as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="source-title">
      <h2 id="source-title">Stream source</h2>
      <SourceLine camera={c} />
      {error && <ErrorNotice error={error} title="Not saved:" />}
      {saved && (
        <div class="notice notice-ok" role="status">
          Saved.
        </div>
      )}
      <form class="grid-form" onSubmit={save}>
        <label for="source-url">Stream URL (rtsp, rtsps, http or https)</label>
        <input
          id="source-url"
          name="source_url"
          type="text"
          inputMode="url"
          spellcheck={false}
          placeholder="rtsp://user:password@192.0.2.10/stream1"
          defaultValue={source?.url ?? ''}
          required
        />
        <p class="hint">The password is never shown back: enter the whole URL again, password included, to change it.</p>
        <label for="source-interval">Check every (seconds)</label>
        <input id="source-interval" name="check_interval_s" type="number" min={MIN_INTERVAL_S} step={1} defaultValue={String(source?.check_interval_s ?? 300)} required />
        <label class="check">
          <input name="enabled" type="checkbox" defaultChecked={source?.enabled ?? true} /> Checks enabled
        </label>
        <button type="submit" disabled={busy}>
          Save source
        </button>
      </form>
    </section>
  );
}
