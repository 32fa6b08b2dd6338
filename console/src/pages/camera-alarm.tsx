// A camera's alarm as an operator handles it: whether the camera is armed now and whether an
// alarm is held back because it was not; acknowledging a standing alarm with a comment (POST
// /cameras/<camera>/acknowledge, again to change the comment); a reset after the repair (POST
// /cameras/<camera>/reset, after a confirmation), both for operators only: a viewer sees the
// alarm and its acknowledgement. And the camera's history: settings changes, acknowledgements
// and resets, each with who and when.
import { useRef, useState } from 'preact/hooks';
import { useFirstFocus } from '../components/first-focus.js';
import { apiPostJson } from '../api.js';
import { useOutcome } from '../components/outcome.js';
import { StateBadge } from '../components/state.js';
import { ago, when } from '../format.js';
import { useAllows } from '../role.js';
import type { ArmedRange, CameraDetail, CameraState, HistoryEntry, MilestoneSource } from '../types.js';
import { periodText, scheduleText } from './camera-settings.js';
import { href } from '../route.js';

/** The API's longest comment (CameraComment.comment). */
const MAX_COMMENT = 1000;

/** A comment as the API takes it: JSON, null when empty. */
const commentBody = (comment: string) => ({ comment: comment.trim() || null });

export function AlarmCard({ camera: c, onChanged }: { camera: CameraDetail; onChanged: () => void }) {
  const path = `/cameras/${encodeURIComponent(c.camera)}`;
  const ack = c.acknowledgement ?? null;
  const inAlarm = c.state === 'tampered';
  const outcome = useOutcome('Not done:');
  const busy = outcome.busy;
  const mayAct = useAllows('operator');
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const resetComment = useRef<HTMLInputElement>(null);
  useFirstFocus(resetComment, confirming);

  // the camera is read again after each action, done or not
  const run = (what: () => Promise<string>) => outcome.run(what).finally(onChanged);
  const acknowledge = (e: Event) => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const comment = String(new FormData(formEl).get('comment') ?? '');
    return run(async () => {
      await apiPostJson(`${path}/acknowledge`, commentBody(comment));
      setEditing(false);
      return ack ? 'The acknowledgement is updated.' : 'The alarm is acknowledged.';
    });
  };
  const reset = () =>
    run(async () => {
      await apiPostJson(`${path}/reset`, commentBody(resetComment.current?.value ?? ''));
      setConfirming(false);
      return c.state === 'offline' ? "Reset: the camera's checks start afresh; it stays offline until its stream answers." : 'Reset: the camera is OK again and its next checks judge it afresh.';
    });

  const tone = inAlarm ? (ack ? 'alarm-card acknowledged' : 'alarm-card raised') : 'alarm-card';
  const nothingToReset = c.state === 'ok' && c.alarm_streak === 0 && !c.alarm_held && !ack;
  return (
    <section class={`card ${tone}`} aria-labelledby="alarm-title">
      <h2 id="alarm-title">Alarm</h2>
      <p class="armed-line">
        <span class={c.armed_now ? 'badge badge-armed' : 'badge badge-disarmed'}>{c.armed_now ? 'Armed now' : 'Disarmed now'}</span> <span class="muted">{scheduleText(c.settings)}</span>
      </p>
      {c.alarm_held && (
        <div class="notice notice-info">
          This alarm came while the camera was disarmed: no alarm event has been sent yet. It is sent when the camera is armed, unless the camera is OK again or reset by then.
        </div>
      )}
      {outcome.notices}

      {ack && (
        <div class="ack-done">
          <p>
            <strong>
              Acknowledged by {ack.acknowledged_by}, {when(ack.acknowledged_at)}
            </strong>{' '}
            <span class="muted">({ago(ack.acknowledged_at)})</span>
          </p>
          {ack.comment ? <p class="ack-comment">“{ack.comment}”</p> : <p class="muted">No comment.</p>}
        </div>
      )}
      {inAlarm && !ack && (
        <p class="alarm-open">
          <StateBadge state="tampered" /> The checks say this camera is tampered. Not acknowledged yet.
        </p>
      )}
      {!inAlarm && !ack && <p class="muted">{c.state === 'offline' ? 'No tamper alarm: the camera is offline (its stream cannot be read).' : 'No alarm: the checks say the camera is OK.'}</p>}

      {mayAct && inAlarm && (!ack || editing) && (
        <form class="stack ack-form" onSubmit={acknowledge} aria-label={ack ? 'Change the acknowledgement' : 'Acknowledge the alarm'}>
          <label for="ack-comment">{ack ? 'New comment' : 'Comment (optional)'}</label>
          <input id="ack-comment" name="comment" type="text" maxLength={MAX_COMMENT} placeholder="Technician on the way" defaultValue={ack?.comment ?? ''} />
          <div class="button-row">
            <button type="submit" class="primary" disabled={busy}>
              {ack ? 'Acknowledge again' : 'Acknowledge'}
            </button>
            {editing && (
              <button type="button" onClick={() => setEditing(false)}>
                Cancel
              </button>
            )}
          </div>
        </form>
      )}
      {mayAct && inAlarm && ack && !editing && (
        <div class="button-row">
          <button type="button" onClick={() => setEditing(true)}>
            Change the comment…
          </button>
        </div>
      )}

      {mayAct && (
        <div class="stack alarm-reset">
          <h3>Reset after repair</h3>
          <p class="hint">
            Once the camera is repaired (lens cleaned, turned back, cover removed): its checks go back to OK with no streak and the next ones judge it afresh; its acknowledgement and any held alarm go. The references stay as they
            are: taking the repaired view as the new reference is its own action (Actions).
          </p>
          {nothingToReset ? (
            <p class="muted">Nothing to reset now.</p>
          ) : !confirming ? (
            <button type="button" disabled={busy} onClick={() => setConfirming(true)}>
              Reset after repair…
            </button>
          ) : (
            <div class="confirm" role="alertdialog" aria-labelledby="reset-text">
              <p id="reset-text">
                Reset <strong>{c.camera}</strong> to OK? Do this only once the cause is repaired: if it is not, the next checks raise the alarm again.
              </p>
              <label for="reset-comment">Comment (optional)</label>
              <input id="reset-comment" ref={resetComment} type="text" maxLength={MAX_COMMENT} placeholder="Lens cleaned" />
              <div class="button-row">
                <button type="button" class="primary" disabled={busy} onClick={reset}>
                  Yes, reset {c.camera}
                </button>
                <button type="button" onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </div>
            </div>
          )}
        </div>
      )}
    </section>
  );
}

/** The settings' names in the history. */
const SETTING_NAMES: Record<string, string> = {
  sensitivity: 'sensitivity',
  alarm_after: 'alarm after',
  clear_after: 'clear after',
  ignore_areas: 'ignore areas',
  armed: 'armed',
  time_zone: 'time zone',
  dark_is_tamper: 'too dark is tampering',
  milestone: 'XProtect events',
};
/** An entry's own fields; every other field of a settings entry is a change. */
const ENTRY_FIELDS = new Set(['at', 'kind', 'by', 'comment', 'previous_state', 'previous_checks_state', 'job_id', 'reference', 'probability', 'older_reference', 'older_probability']);

export function settingValue(name: string, value: unknown): string {
  if (value === null || value === undefined) return name === 'milestone' ? 'not sent' : 'default';
  if (name === 'ignore_areas' && Array.isArray(value)) return value.length === 0 ? 'none' : `${value.length} area${value.length === 1 ? '' : 's'}`;
  if (name === 'armed' && Array.isArray(value)) return value.length === 0 ? 'always' : (value as ArmedRange[]).map(periodText).join('; ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (name === 'milestone' && typeof value === 'object') return `XProtect camera "${(value as MilestoneSource).source_name}"`;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** "sensitivity: medium → high", one per changed setting. */
export function settingChanges(entry: HistoryEntry): string[] {
  return Object.entries(entry)
    .filter(([k, v]) => !ENTRY_FIELDS.has(k) && v !== null && typeof v === 'object' && 'to' in (v as object))
    .map(([k, v]) => {
      const { from, to } = v as { from: unknown; to: unknown };
      return `${SETTING_NAMES[k] ?? k.replace(/_/g, ' ')}: ${settingValue(k, from)} → ${settingValue(k, to)}`;
    });
}

const KIND: Record<HistoryEntry['kind'], string> = {
  settings: 'Settings changed',
  acknowledged: 'Acknowledged',
  reset: 'Reset after repair',
  reference_set_aside: 'Renewed reference set aside',
};

/** A set-aside entry in words: which picture alarmed, against what the older one said, and the check. */
function SetAside({ entry: h }: { entry: HistoryEntry }) {
  const taken = h.reference ? `The reference renewed at ${when(h.reference.captured_at)} (${h.reference.slot})` : 'A renewed reference';
  const older = h.older_reference ? `the one before it (${when(h.older_reference.captured_at)})` : 'the one before it';
  return (
    <p class="history-detail">
      {taken} scored {h.probability ?? '?'}%, {older} {h.older_probability ?? '?'}%. It kept something passing, such as a car's light: the one before it is used again.{' '}
      {h.job_id && <a href={href.kamcheck(h.job_id)}>The check</a>}
    </p>
  );
}

export function CameraHistory({ camera: c }: { camera: CameraDetail }) {
  return (
    <section class="card history-card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <p class="hint">Settings changes, acknowledgements, resets and references the appliance set aside: the last 10, newest first.</p>
      {c.history.length === 0 ? (
        <p class="muted">Nothing yet: the camera runs on the appliance's defaults and no alarm was acknowledged or reset.</p>
      ) : (
        <ol class="history">
          {c.history.map((h, i) => (
            <li key={`${h.at}-${i}`} class={`history-${h.kind}`}>
              <p class="history-head">
                <strong>{KIND[h.kind] ?? h.kind}</strong> <span>by {h.by ?? 'the appliance'}</span> <span class="muted">· {when(h.at)}</span>
              </p>
              {h.kind === 'settings' && (
                <ul class="history-changes">
                  {settingChanges(h).map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
              )}
              {h.kind === 'reference_set_aside' && <SetAside entry={h} />}
              {(h.kind === 'acknowledged' || h.kind === 'reset') && (
                <p class="history-detail">
                  {h.kind === 'reset' && h.previous_state && (
                    <>
                      was <StateBadge state={h.previous_state as CameraState} /> ·{' '}
                    </>
                  )}
                  {h.comment ? `“${h.comment}”` : <span class="muted">no comment</span>}
                </p>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
