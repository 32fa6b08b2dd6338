// A camera's settings (PUT /cameras/<camera>, the settings fields only): how sensitive its checks
// are, how many make or clear an alarm, whether a picture too dark to judge is tampering, when it
// is armed and in which time zone; and the areas of its picture that count for nothing, drawn on
// its reference; and how Milestone XProtect knows the camera, for its analytics events. Each form
// sends only what the operator changed, so a value the camera takes from the appliance's defaults
// stays a default until someone sets it.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiPutJson } from '../api.js';
import { AreaEditor } from '../components/area-editor.js';
import { useOutcome } from '../components/outcome.js';
import type { ArmedRange, CameraDetail, CameraSettings, IgnoreArea, MilestoneSource, Sensitivity, Weekday } from '../types.js';

/** Each level's line (openapi: CameraSourceSettings.sensitivity). */
export const SENSITIVITY: Record<Sensitivity, { label: string; line: number; why: string }> = {
  low: { label: 'Low', line: 60, why: 'for a busy scene that needs more evidence' },
  medium: { label: 'Medium', line: 50, why: "the appliance's default" },
  high: { label: 'High', line: 35, why: 'for a quiet scene, to catch subtle tampering' },
};
/** The API's range of alarm_after and clear_after. */
const MIN_CHECKS = 1;
const MAX_CHECKS = 1000;

export const WEEK: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY: Record<Weekday, [string, string]> = {
  mon: ['Mon', 'Monday'],
  tue: ['Tue', 'Tuesday'],
  wed: ['Wed', 'Wednesday'],
  thu: ['Thu', 'Thursday'],
  fri: ['Fri', 'Friday'],
  sat: ['Sat', 'Saturday'],
  sun: ['Sun', 'Sunday'],
};

/** "Mon–Fri", "Sat, Sun", "every day". */
function daysText(days: Weekday[]): string {
  const on = WEEK.map((d) => days.includes(d));
  if (on.every(Boolean)) return 'every day';
  const runs: string[] = [];
  for (let i = 0; i < 7; i++) {
    if (!on[i] || (i > 0 && on[i - 1])) continue;
    let j = i;
    while (j + 1 < 7 && on[j + 1]) j++;
    const [a, b] = [DAY[WEEK[i]][0], DAY[WEEK[j]][0]];
    runs.push(j - i >= 2 ? `${a}–${b}` : j > i ? `${a}, ${b}` : a);
  }
  return runs.join(', ');
}

/** One period in words: "Mon–Fri 18:00–07:00". */
export const periodText = (r: ArmedRange) => `${daysText(r.days)} ${r.from === r.to ? `from ${r.from} for 24 h` : `${r.from}–${r.to}`}`;

/** When a camera is armed, in words. */
export const scheduleText = (s: Pick<CameraSettings, 'armed' | 'time_zone'>) =>
  s.armed.length === 0 ? 'Always armed: no schedule is set.' : `Schedule: ${s.armed.map(periodText).join('; ')} (${s.time_zone}).`;

/**
 * A form's copy of what the appliance says. A new answer (a save, another operator's change)
 * replaces the copy unless the operator has edited it since the answer before.
 */
function useDraft<T>(server: T) {
  const key = JSON.stringify(server);
  const [draft, setDraft] = useState<T>(server);
  const shown = useRef(key);
  useEffect(() => {
    if (JSON.stringify(draft) === shown.current) setDraft(server);
    shown.current = key;
  }, [key]);
  return { draft, setDraft, dirty: JSON.stringify(draft) !== key, discard: () => setDraft(server) };
}

export function CameraSettingsCard({ camera: c, onChanged }: { camera: CameraDetail; onChanged: () => void }) {
  return (
    <section class="card settings-card" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <div class="settings-columns">
        <RulesForm camera={c} onChanged={onChanged} />
        <IgnoreAreasForm camera={c} onChanged={onChanged} />
      </div>
      <MilestoneForm camera={c} onChanged={onChanged} />
    </section>
  );
}

interface RulesDraft {
  sensitivity: Sensitivity;
  alarm_after: string;
  clear_after: string;
  dark_is_tamper: boolean;
  time_zone: string;
  armed: ArmedRange[];
}

/** A time input cannot show 24:00; as the end of a period it is the same as 00:00. */
const fromRules = (s: CameraSettings): RulesDraft => ({
  sensitivity: s.sensitivity,
  alarm_after: String(s.alarm_after),
  clear_after: String(s.clear_after),
  dark_is_tamper: s.dark_is_tamper,
  time_zone: s.time_zone,
  armed: s.armed.map((r) => ({ days: WEEK.filter((d) => r.days.includes(d)), from: r.from === '24:00' ? '00:00' : r.from, to: r.to === '24:00' ? '00:00' : r.to })),
});

/** What the operator changed, as the API takes it: an emptied number or time zone is the default (null). */
function changes(d: RulesDraft, s: CameraSettings): Record<string, unknown> {
  const was = fromRules(s);
  const body: Record<string, unknown> = {};
  if (d.sensitivity !== was.sensitivity) body.sensitivity = d.sensitivity;
  for (const k of ['alarm_after', 'clear_after'] as const) {
    if (d[k].trim() === '') body[k] = null;
    else if (d[k].trim() !== was[k]) body[k] = Number(d[k]);
  }
  if (d.dark_is_tamper !== was.dark_is_tamper) body.dark_is_tamper = d.dark_is_tamper;
  if (d.time_zone.trim() === '') body.time_zone = null;
  else if (d.time_zone.trim() !== was.time_zone) body.time_zone = d.time_zone.trim();
  if (JSON.stringify(d.armed) !== JSON.stringify(was.armed)) body.armed = d.armed;
  return body;
}

/** The browser's IANA time zones, for the time zone's suggestions (where it can list them). */
const TIME_ZONES: string[] = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  } catch {
    return [];
  }
})();

function RulesForm({ camera: c, onChanged }: { camera: CameraDetail; onChanged: () => void }) {
  const { draft, setDraft, dirty, discard } = useDraft(fromRules(c.settings));
  const outcome = useOutcome('Not saved:');
  const edit = (patch: Partial<RulesDraft>) => {
    outcome.clear();
    setDraft({ ...draft, ...patch });
  };
  const save = (e: Event) => {
    e.preventDefault();
    return outcome.run(async () => {
      const dayless = draft.armed.findIndex((r) => r.days.length === 0);
      if (dayless >= 0) throw new Error(`period ${dayless + 1} has no day: choose at least one, or remove the period.`);
      const body = changes(draft, c.settings);
      if (Object.keys(body).length === 0) return 'Nothing to save: the settings are as shown.';
      const answer = await apiPutJson<{ camera: CameraDetail }>(`/cameras/${encodeURIComponent(c.camera)}`, body);
      setDraft(fromRules(answer.camera.settings));
      onChanged();
      return 'Settings saved.';
    });
  };
  const level = SENSITIVITY[draft.sensitivity];
  return (
    <form class="grid-form settings-form" onSubmit={save} aria-labelledby="rules-title">
      <h3 id="rules-title">Checks and alarms</h3>
      <label for="settings-sensitivity">Sensitivity</label>
      <select id="settings-sensitivity" value={draft.sensitivity} onChange={(e) => edit({ sensitivity: e.currentTarget.value as Sensitivity })} aria-describedby="sensitivity-hint">
        {(Object.keys(SENSITIVITY) as Sensitivity[]).map((s) => (
          <option key={s} value={s}>
            {SENSITIVITY[s].label} — alarms at {SENSITIVITY[s].line} and above
          </option>
        ))}
      </select>
      <p id="sensitivity-hint" class="hint">
        A check counts as tampered from a probability of {level.line}: {level.why}. The probability itself is the same at every level.
      </p>

      <div class="settings-numbers">
        <span>
          <label for="settings-alarm-after">Alarm after</label>
          <input id="settings-alarm-after" type="number" min={MIN_CHECKS} max={MAX_CHECKS} step={1} value={draft.alarm_after} onInput={(e) => edit({ alarm_after: e.currentTarget.value })} aria-describedby="checks-hint" />
          <span class="unit">tampered checks in a row</span>
        </span>
        <span>
          <label for="settings-clear-after">Clear after</label>
          <input id="settings-clear-after" type="number" min={MIN_CHECKS} max={MAX_CHECKS} step={1} value={draft.clear_after} onInput={(e) => edit({ clear_after: e.currentTarget.value })} aria-describedby="checks-hint" />
          <span class="unit">good checks in a row</span>
        </span>
      </div>
      <p id="checks-hint" class="hint">
        In use: an alarm after {c.settings.alarm_after}, cleared after {c.settings.clear_after}. Empty: the appliance's default.
      </p>

      <label class="check">
        <input type="checkbox" checked={draft.dark_is_tamper} onChange={(e) => edit({ dark_is_tamper: e.currentTarget.checked })} aria-describedby="dark-hint" /> A picture too dark to judge is tampering
      </label>
      <p id="dark-hint" class="hint">
        Off: a black picture, or one too dark to judge its focus, raises no alarm (a camera that sees nothing at night). A dim picture that can still be judged is judged either way.
      </p>

      <ScheduleEditor armed={draft.armed} onChange={(armed) => edit({ armed })}>
        <label for="settings-time-zone">Time zone of the schedule</label>
        <input
          id="settings-time-zone"
          type="text"
          list={TIME_ZONES.length > 0 ? 'time-zones' : undefined}
          spellcheck={false}
          autocomplete="off"
          placeholder="Europe/Berlin"
          value={draft.time_zone}
          onInput={(e) => edit({ time_zone: e.currentTarget.value })}
          aria-describedby="time-zone-hint"
        />
        {TIME_ZONES.length > 0 && (
          <datalist id="time-zones">
            {TIME_ZONES.map((z) => (
              <option key={z} value={z} />
            ))}
          </datalist>
        )}
        <p id="time-zone-hint" class="hint">
          An IANA name such as Europe/Berlin. Empty: the appliance's own.
        </p>
      </ScheduleEditor>


      {outcome.notices}
      <div class="button-row">
        <button type="submit" class="primary" disabled={outcome.busy}>
          Save settings
        </button>
        {dirty && <DiscardButton onDiscard={() => { outcome.clear(); discard(); }} />}
      </div>
    </form>
  );
}

/** Puts a form back to what the appliance says. */
const DiscardButton = ({ onDiscard }: { onDiscard: () => void }) => (
  <button type="button" onClick={onDiscard}>
    Discard changes
  </button>
);

/** The periods of the schedule; `children`: the schedule's time zone field. */
function ScheduleEditor({ armed, onChange, children }: { armed: ArmedRange[]; onChange: (armed: ArmedRange[]) => void; children?: ComponentChildren }) {
  const set = (i: number, patch: Partial<ArmedRange>) => onChange(armed.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const toggle = (i: number, day: Weekday) => {
    const days = armed[i].days.includes(day) ? armed[i].days.filter((d) => d !== day) : [...armed[i].days, day];
    set(i, { days: WEEK.filter((d) => days.includes(d)) });
  };
  return (
    <fieldset class="schedule">
      <legend>When the camera is armed</legend>
      <p class="hint">Outside these periods the checks still run and the state still changes, but an alarm sends no event until the camera is armed. A period whose end is before its start runs past midnight.</p>
      {armed.length === 0 ? (
        <p class="schedule-empty">Always armed: no period set.</p>
      ) : (
        <ol class="periods">
          {armed.map((r, i) => (
            <li key={i} class="period" role="group" aria-label={`Period ${i + 1}`}>
              <div class="day-toggles">
                {WEEK.map((d) => (
                  <button key={d} type="button" class="day" aria-pressed={r.days.includes(d) ? 'true' : 'false'} aria-label={DAY[d][1]} onClick={() => toggle(i, d)}>
                    {DAY[d][0]}
                  </button>
                ))}
              </div>
              <span class="period-times">
                <label for={`period-${i}-from`}>From</label>
                <input id={`period-${i}-from`} type="time" required value={r.from} onInput={(e) => set(i, { from: e.currentTarget.value })} />
                <label for={`period-${i}-to`}>to</label>
                <input id={`period-${i}-to`} type="time" required value={r.to} onInput={(e) => set(i, { to: e.currentTarget.value })} />
              </span>
              <button type="button" class="danger small" aria-label={`Remove period ${i + 1}`} onClick={() => onChange(armed.filter((_, j) => j !== i))}>
                Remove
              </button>
              {(r.days.length === 0 || r.to <= r.from) && (
                <p class="hint period-note">
                  {r.days.length === 0 ? 'Choose at least one day.' : r.to === r.from ? 'Start and end alike: armed for 24 hours from then.' : 'Runs past midnight into the next day.'}
                </p>
              )}
            </li>
          ))}
        </ol>
      )}
      <div>
        <button type="button" onClick={() => onChange([...armed, { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '18:00', to: '07:00' }])}>
          Add a period
        </button>
      </div>
      {children}
    </fieldset>
  );
}

function IgnoreAreasForm({ camera: c, onChanged }: { camera: CameraDetail; onChanged: () => void }) {
  const { draft, setDraft, dirty, discard } = useDraft<IgnoreArea[]>(c.settings.ignore_areas);
  const outcome = useOutcome('Not saved:');
  const save = () =>
    outcome.run(async () => {
      const answer = await apiPutJson<{ camera: CameraDetail }>(`/cameras/${encodeURIComponent(c.camera)}`, { ignore_areas: draft });
      setDraft(answer.camera.settings.ignore_areas);
      onChanged();
      return draft.length === 0 ? 'Areas saved: none is ignored.' : 'Areas saved.';
    });
  return (
    <section class="areas-form" aria-labelledby="areas-title">
      <h3 id="areas-title">Ignore areas</h3>
      <p class="hint">
        Parts of the picture whose content counts for nothing: a screen, a tree, a road. A mask or smear over the rest still counts. They must leave at least a fifth of the picture; they apply to every reference of the camera.
      </p>
      <AreaEditor
        image={c.reference_image}
        camera={c.camera}
        areas={draft}
        onChange={(areas) => {
          outcome.clear();
          setDraft(areas);
        }}
      />
      {outcome.notices}
      <div class="button-row">
        <button type="button" class="primary" disabled={outcome.busy || !dirty} onClick={save}>
          Save areas
        </button>
        {dirty && (
          <>
            <DiscardButton onDiscard={() => { outcome.clear(); discard(); }} />
            <span class="unsaved" role="status">
              Not saved yet
            </span>
          </>
        )}
      </div>
    </section>
  );
}

/** The messages a camera sends when it names none (openapi: MilestoneSourceInput.messages). */
const MILESTONE_DEFAULTS = { tampered: 'Camera tampered', offline: 'Camera offline', ok: 'Camera OK' };
const MILESTONE_STATES: [keyof MilestoneSource['messages'], string][] = [
  ['tampered', 'Tampered'],
  ['offline', 'Offline'],
  ['ok', 'Back to OK'],
];

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

interface MilestoneDraft {
  source_name: string;
  source_object_id: string;
  messages: MilestoneSource['messages'];
}

/** A default message is shown as empty (its placeholder), so that it stays a default. */
const fromMilestone = (m: MilestoneSource | null): MilestoneDraft => ({
  source_name: m?.source_name ?? '',
  source_object_id: m?.source_object_id ?? '',
  messages: {
    tampered: m && m.messages.tampered !== MILESTONE_DEFAULTS.tampered ? m.messages.tampered : '',
    offline: m && m.messages.offline !== MILESTONE_DEFAULTS.offline ? m.messages.offline : '',
    ok: m && m.messages.ok !== MILESTONE_DEFAULTS.ok ? m.messages.ok : '',
  },
});

function MilestoneForm({ camera: c, onChanged }: { camera: CameraDetail; onChanged: () => void }) {
  const { draft, setDraft, dirty, discard } = useDraft(fromMilestone(c.settings.milestone));
  const outcome = useOutcome('Not saved:');
  const sending = c.settings.milestone !== null;
  const edit = (patch: Partial<MilestoneDraft>) => {
    outcome.clear();
    setDraft({ ...draft, ...patch });
  };
  const put = (milestone: unknown, done: string) =>
    outcome.run(async () => {
      const answer = await apiPutJson<{ camera: CameraDetail }>(`/cameras/${encodeURIComponent(c.camera)}`, { milestone });
      setDraft(fromMilestone(answer.camera.settings.milestone));
      onChanged();
      return done;
    });
  const save = (e: Event) => {
    e.preventDefault();
    if (draft.source_name.trim() === '') {
      return outcome.run(async () => {
        throw new Error(sending ? "give the camera's name or address in XProtect, or stop sending events." : "give the camera's name or address in XProtect.");
      });
    }
    const id = draft.source_object_id.trim();
    if (id !== '' && !GUID.test(id)) {
      return outcome.run(async () => {
        throw new Error("the camera's id in XProtect is a GUID such as 1f3bd6a1-4b8e-4bd0-9f56-5d1c6d2b1a10; leave it empty to name the camera only.");
      });
    }
    return put(
      { source_name: draft.source_name, source_object_id: id || null, messages: draft.messages },
      'XProtect settings saved: the next change of state goes there.',
    );
  };
  return (
    <form class="grid-form milestone-form" onSubmit={save} aria-labelledby="milestone-title">
      <h3 id="milestone-title">Milestone XProtect</h3>
      <p class="hint">
        {sending ? "This camera's changes of state go to XProtect as analytics events" : "This camera's changes of state are not sent to XProtect"}, when the appliance has an event server
        (MILESTONE_EVENT_URL). Each message must match an analytics event defined in XProtect.
      </p>
      <div class="milestone-fields">
        <span>
          <label for="milestone-source">Camera in XProtect</label>
          <input id="milestone-source" type="text" spellcheck={false} placeholder="Name or address, e.g. 192.168.0.199" value={draft.source_name} onInput={(e) => edit({ source_name: e.currentTarget.value })} />
        </span>
        <span class="milestone-id">
          <label for="milestone-object-id">Its id (optional)</label>
          <input id="milestone-object-id" type="text" spellcheck={false} placeholder="GUID from the Management Client" value={draft.source_object_id} onInput={(e) => edit({ source_object_id: e.currentTarget.value })} />
        </span>
        {MILESTONE_STATES.map(([state, label]) => (
          <span key={state}>
            <label for={`milestone-${state}`}>Message: {label}</label>
            <input
              id={`milestone-${state}`}
              type="text"
              placeholder={MILESTONE_DEFAULTS[state]}
              value={draft.messages[state]}
              onInput={(e) => edit({ messages: { ...draft.messages, [state]: e.currentTarget.value } })}
            />
          </span>
        ))}
      </div>
      {outcome.notices}
      <div class="button-row">
        <button type="submit" class="primary" disabled={outcome.busy}>
          Save XProtect settings
        </button>
        {dirty && <DiscardButton onDiscard={() => { outcome.clear(); discard(); }} />}
        {sending && (
          <button type="button" class="danger" disabled={outcome.busy} onClick={() => put(null, 'No more events of this camera go to XProtect.')}>
            Stop sending
          </button>
        )}
      </div>
    </form>
  );
}
