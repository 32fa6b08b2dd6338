// The admin's audit trail: every change and sign-in, newest first, a page at a time (GET /audit),
// filtered by who did it (actor) or what it was done to (target), both as the appliance records
// them, so a click on one in the table filters by it. A change shows what it was before and what
// it became; the first page updates itself.
import { useEffect, useState } from 'preact/hooks';
import { apiGet } from '../api.js';
import { Empty, ErrorNotice, Loading } from '../components/notice.js';
import { dateAndTime, dateOnly, timeOfDay } from '../format.js';
import { usePoll } from '../poll.js';
import { ROLE_LABEL, type Role } from '../role.js';
import type { AuditEvent } from '../types.js';
import { settingValue } from './camera-alarm.js';
import { LiveStatus } from './cameras.js';

export const AUDIT_PER_PAGE = 50;
const AUDIT_POLL_MS = 5000;

interface AuditPage {
  total: number;
  events: AuditEvent[];
}

interface Filters {
  actor: string;
  target: string;
}

const NO_FILTERS: Filters = { actor: '', target: '' };

/** The actions in words; an action the console does not know shows as the appliance names it. */
const ACTIONS: Record<string, string> = {
  'user.created': 'User added',
  'user.changed': 'User changed',
  'user.deleted': 'User removed',
  'key.created': 'Key created',
  'key.revoked': 'Key revoked',
  'camera.changed': 'Camera changed',
  'camera.deleted': 'Camera deleted',
  'camera.reference_set': 'Reference set',
  'camera.acknowledged': 'Alarm acknowledged',
  'camera.reset': 'Reset after repair',
  'camera.check_asked': 'Check asked for',
  'sign_in.succeeded': 'Signed in',
  'sign_in.failed': 'Sign-in refused',
  'session.ended': 'Signed out',
};

/** How a sign-in presented its credentials (lib/users/authenticator.ts: SignInMethod). */
const METHODS: Record<string, string> = { console: 'in the console', basic: 'with Basic credentials', key: 'with an API key' };

/** The fields' names in the changes, where a name of the API reads badly. */
const FIELDS: Record<string, string> = {
  cameras: 'cameras',
  expires_at: 'expires',
  check_interval_s: 'check every',
  source_url: 'stream URL',
  enabled: 'checks',
  alarm_after: 'alarm after',
  clear_after: 'clear after',
  ignore_areas: 'ignore areas',
  time_zone: 'time zone',
  dark_is_tamper: 'too dark is tampering',
  milestone: 'XProtect events',
};

function value(action: string, field: string, v: unknown): string {
  if (field === 'cameras') return Array.isArray(v) ? v.join(', ') : 'all';
  if (field === 'role' && typeof v === 'string' && v in ROLE_LABEL) return ROLE_LABEL[v as Role].toLowerCase();
  if (field === 'expires_at') return typeof v === 'string' ? dateAndTime(v) : 'never';
  if (field === 'check_interval_s' && typeof v === 'number') return `${v} s`;
  if (field === 'enabled' && typeof v === 'boolean') return v ? 'enabled' : 'paused';
  if (action.startsWith('camera.')) return settingValue(field, v);
  if (v === null || v === undefined) return '—';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The lines of an event's change: "role: viewer → operator", or a new thing's values. */
export function changeLines(e: AuditEvent): string[] {
  const d = e.detail;
  if (!d) return [];
  const before = d.before ?? undefined;
  const after = d.after ?? undefined;
  const lines: string[] = [];
  const name = (k: string) => FIELDS[k] ?? k.replace(/_/g, ' ');
  for (const k of [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])]) {
    const b = before?.[k];
    const a = after?.[k];
    if (k === 'password') {
      if (a !== undefined) lines.push(before ? 'password changed' : 'password set');
    } else if (!before) lines.push(`${name(k)}: ${value(e.action, k, a)}`);
    else if (!after) lines.push(`${name(k)} was ${value(e.action, k, b)}`);
    else if (JSON.stringify(b) !== JSON.stringify(a)) lines.push(`${name(k)}: ${value(e.action, k, b)} → ${value(e.action, k, a)}`);
  }
  // what a detail holds beside before and after: a stream source as set, how one signed in
  for (const [k, v] of Object.entries(d)) {
    if (k === 'before' || k === 'after' || v === undefined || v === null) continue;
    if (k === 'method' && typeof v === 'string') {
      lines.push(METHODS[v] ?? `with ${v}`);
      continue;
    }
    if (typeof v === 'object' && !Array.isArray(v)) {
      const parts = Object.entries(v as Record<string, unknown>)
        .filter(([, x]) => x !== undefined && x !== null)
        .map(([f, x]) => `${name(f)} ${value(e.action, f, x)}`);
      if (parts.length > 0) lines.push(`${name(k)}: ${parts.join(', ')}`);
    } else lines.push(`${name(k)} ${value(e.action, k, v)}`);
  }
  return lines;
}

async function readAudit(filters: Filters, page: number): Promise<AuditPage> {
  const query = new URLSearchParams({ page: String(page), per_page: String(AUDIT_PER_PAGE) });
  if (filters.actor) query.set('actor', filters.actor);
  if (filters.target) query.set('target', filters.target);
  return apiGet<AuditPage>(`/audit?${query}`);
}

export function AuditPage() {
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [page, setPage] = useState(1);
  useEffect(() => setPage(1), [filters]);
  const polled = usePoll(() => readAudit(filters, page), page === 1 ? AUDIT_POLL_MS : 0, `audit:${filters.actor}\n${filters.target}\n${page}`);
  const data = polled.data;
  const pages = data ? Math.max(1, Math.ceil(data.total / AUDIT_PER_PAGE)) : 1;
  const first = (page - 1) * AUDIT_PER_PAGE;
  const filtered = filters.actor !== '' || filters.target !== '';
  const apply = (f: Filters) => {
    setDraft(f);
    setFilters(f);
  };
  return (
    <main id="main" tabIndex={-1} class="page">
      <header class="page-head">
        <h1>Audit trail</h1>
        {page === 1 && <LiveStatus updatedAt={polled.updatedAt} failing={polled.error !== null} />}
      </header>
      <p class="lede">Every change to cameras, users and keys, and every sign-in, with who did it and from where: newest first.</p>
      <form
        class="audit-filters"
        role="search"
        aria-label="Filter the audit trail"
        onSubmit={(e) => {
          e.preventDefault();
          apply({ actor: draft.actor.trim(), target: draft.target.trim() });
        }}
      >
        <span>
          <label for="audit-actor">Actor</label>
          <input id="audit-actor" type="text" spellcheck={false} autocomplete="off" placeholder="A user name, or key:<id> (<name>)" value={draft.actor} onInput={(e) => setDraft({ ...draft, actor: e.currentTarget.value })} />
        </span>
        <span>
          <label for="audit-target">Target</label>
          <input id="audit-target" type="text" spellcheck={false} autocomplete="off" placeholder="camera:gate-1, user:alice, key:<id>" value={draft.target} onInput={(e) => setDraft({ ...draft, target: e.currentTarget.value })} />
        </span>
        <div class="button-row">
          <button type="submit" class="primary">
            Filter
          </button>
          {filtered && (
            <button type="button" onClick={() => apply(NO_FILTERS)}>
              Show all
            </button>
          )}
        </div>
      </form>
      <p class="hint audit-hint">Both match exactly, as the table shows them: click an actor or a target to filter by it.</p>
      {polled.error && <ErrorNotice error={polled.error} title={data ? 'Not updated:' : 'Cannot load the audit trail:'} />}
      {!data && !polled.error && <Loading what="the audit trail" />}
      {data && data.events.length === 0 && <Empty title={filtered ? 'Nothing matches the filter.' : 'Nothing recorded yet.'} />}
      {data && data.events.length > 0 && (
        <>
          <section class="card" aria-label="Events">
            <div class="table-wrap">
              <table class="audit-table">
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Actor</th>
                    <th scope="col" class="audit-address">
                      Address
                    </th>
                    <th scope="col">Action</th>
                    <th scope="col">Target</th>
                    <th scope="col">Change</th>
                  </tr>
                </thead>
                <tbody>
                  {data.events.map((e) => (
                    <EventRow key={e.id} event={e} onFilter={(f) => apply({ ...filters, ...f })} />
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          {pages > 1 && (
            <nav class="pager" aria-label="Pages of the audit trail">
              <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                ‹ Newer
              </button>
              <span>
                Events {first + 1}–{first + data.events.length} of {data.total}
              </span>
              <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
                Older ›
              </button>
            </nav>
          )}
        </>
      )}
    </main>
  );
}

function EventRow({ event: e, onFilter }: { event: AuditEvent; onFilter: (f: Partial<Filters>) => void }) {
  const lines = changeLines(e);
  return (
    <tr data-action={e.action} class={e.action === 'sign_in.failed' ? 'audit-refused' : undefined}>
      <td>
        <span class="nowrap">{dateOnly(e.at)}</span> <span class="nowrap">{timeOfDay(e.at)}</span>
      </td>
      <td>
        <button type="button" class="cell-link" title="Show only what this actor did" onClick={() => onFilter({ actor: e.actor })}>
          {e.actor || '—'}
        </button>
        {/* a narrow screen has no room for the address's own column */}
        <code class="audit-address-inline muted">{e.address}</code>
      </td>
      <td class="audit-address">
        <code>{e.address}</code>
      </td>
      <td>
        <span class="audit-action">{ACTIONS[e.action] ?? e.action}</span>
        <code class="muted audit-code">{e.action}</code>
      </td>
      <td>
        <button type="button" class="cell-link" title="Show only what was done to this" onClick={() => onFilter({ target: e.target })}>
          <code>{e.target}</code>
        </button>
      </td>
      <td class="audit-change">
        {lines.length === 0 ? (
          <span class="muted">—</span>
        ) : (
          <ul>
            {lines.map((l) => (
              <li key={l}>{l}</li>
            ))}
          </ul>
        )}
      </td>
    </tr>
  );
}
