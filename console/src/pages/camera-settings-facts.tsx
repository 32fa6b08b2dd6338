// A camera's settings as a viewer sees them: the values the settings forms edit (how sensitive
// the checks are, how many make or clear an alarm, darkness, when it is armed), its ignore areas
// drawn on its reference, and where its events go in Milestone XProtect; nothing to change.
import { AreaEditor } from '../components/area-editor.js';
import type { CameraDetail } from '../types.js';
import { periodText, SENSITIVITY } from './camera-settings.js';

const checks = (n: number, what: string) => `${n} ${what} check${n === 1 ? '' : 's'} in a row`;

export function CameraSettingsFacts({ camera: c }: { camera: CameraDetail }) {
  const s = c.settings;
  const level = SENSITIVITY[s.sensitivity];
  const m = s.milestone;
  return (
    <section class="card settings-card" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <div class="settings-columns read-only">
        <div class="settings-facts">
          <h3>Checks and alarms</h3>
          <dl class="facts">
            <dt>Sensitivity</dt>
            <dd>
              {level.label} <span class="muted">— alarms at {level.line} and above</span>
            </dd>
            <dt>Alarm after</dt>
            <dd>{checks(s.alarm_after, 'tampered')}</dd>
            <dt>Clear after</dt>
            <dd>{checks(s.clear_after, 'good')}</dd>
            <dt>Too dark to judge</dt>
            <dd>{s.dark_is_tamper ? 'counts as tampering' : 'raises no alarm'}</dd>
            <dt>Armed</dt>
            <dd>
              {s.armed.length === 0 ? (
                'always: no schedule is set'
              ) : (
                <ul class="plain-list">
                  {s.armed.map((r, i) => (
                    <li key={i}>{periodText(r)}</li>
                  ))}
                </ul>
              )}
            </dd>
            {s.armed.length > 0 && (
              <>
                <dt>Time zone</dt>
                <dd>{s.time_zone}</dd>
              </>
            )}
          </dl>
        </div>
        <section class="areas-form" aria-labelledby="areas-title">
          <h3 id="areas-title">Ignore areas</h3>
          {s.ignore_areas.length === 0 ? (
            <p class="muted">None: every part of the picture counts.</p>
          ) : (
            <>
              <p class="hint">Parts of the picture whose content counts for nothing in the checks.</p>
              <AreaEditor image={c.reference_image} camera={c.camera} areas={s.ignore_areas} readOnly />
            </>
          )}
        </section>
      </div>
      <div class="milestone-form">
        <h3>Milestone XProtect</h3>
        {m ? (
          <dl class="facts">
            <dt>Camera in XProtect</dt>
            <dd>
              {m.source_name}
              {m.source_object_id && <span class="muted"> · {m.source_object_id}</span>}
            </dd>
            <dt>Messages</dt>
            <dd>
              tampered: “{m.messages.tampered}” · offline: “{m.messages.offline}” · back to OK: “{m.messages.ok}”
            </dd>
          </dl>
        ) : (
          <p class="muted">This camera's changes of state are not sent to XProtect.</p>
        )}
      </div>
    </section>
  );
}
