// The admin's API keys: the keys of scripts and integrations, with their role, cameras, expiry and
// last use (GET /keys); creating one (POST /keys), whose secret the appliance answers once and
// keeps only a hash of, so the page shows it once to be copied; revoking one after a
// confirmation (DELETE /keys/<id>), after which every request with it is refused.
import { useRef, useState } from 'preact/hooks';
import { useFirstFocus } from '../components/first-focus.js';
import { apiDelete, apiGet, apiPostJson } from '../api.js';
import { Cameras, CAMERAS_HINT, parseCameras, RoleBadge, RoleSelect } from '../components/access-fields.js';
import { Empty, ErrorNotice, Loading } from '../components/notice.js';
import { useOutcome } from '../components/outcome.js';
import { ago, when } from '../format.js';
import { usePoll } from '../poll.js';
import type { ApiKey } from '../types.js';

/** The key's user name in Basic credentials (lib/users/api-key-format.ts). */
const API_KEY_USER = 'apikey';

export function KeysPage() {
  const polled = usePoll(() => apiGet<{ keys: ApiKey[] }>('/keys').then((r) => r.keys), 0, 'keys');
  const [created, setCreated] = useState<{ key: ApiKey; secret: string } | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const keys = polled.data;
  return (
    <main id="main" tabIndex={-1} class="page narrow">
      <h1>API keys</h1>
      <p class="lede">Keys let a script, a VMS or another system use the API without a user's password. Each has its own role and cameras, and may expire; revoke a key the moment it is no longer needed or may have leaked.</p>
      {created && <NewKeySecret name={created.key.name} secret={created.secret} onDismiss={() => setCreated(null)} />}
      {polled.error && <ErrorNotice error={polled.error} title="Cannot load the keys:" />}
      {!keys && !polled.error && <Loading what="the keys" />}
      {done && (
        <div class="notice notice-ok" role="status">
          {done}
        </div>
      )}
      {keys && keys.length === 0 && <Empty title="No API keys yet">Create one below for each system that uses the API.</Empty>}
      {keys && keys.length > 0 && (
        <section class="card" aria-labelledby="keys-title">
          <h2 id="keys-title">
            {keys.length} key{keys.length === 1 ? '' : 's'}
          </h2>
          <div class="table-wrap">
            <table class="access-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Cameras</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <KeyRow
                    key={k.id}
                    apiKey={k}
                    confirming={revoking === k.id}
                    onConfirm={(on) => (setDone(null), setRevoking(on ? k.id : null))}
                    onRevoked={() => {
                      setRevoking(null);
                      setDone(`The key “${k.name}” is revoked: requests with it are refused.`);
                      polled.reload();
                    }}
                  />
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <CreateKey
        onCreated={(c) => {
          setDone(null);
          setCreated(c);
          polled.reload();
        }}
      />
    </main>
  );
}

function KeyRow({ apiKey: k, confirming, onConfirm, onRevoked }: { apiKey: ApiKey; confirming: boolean; onConfirm: (on: boolean) => void; onRevoked: () => void }) {
  const expired = k.expires_at !== null && new Date(k.expires_at).getTime() <= Date.now();
  return (
    <>
      <tr data-key={k.id} class={confirming ? 'row-open' : undefined}>
        <td>
          <strong>{k.name}</strong>
          <br />
          <code class="muted key-id" title="The key's id: its target in the audit trail">
            {k.id}
          </code>
        </td>
        <td>
          <RoleBadge role={k.role} />
        </td>
        <td>
          <Cameras cameras={k.cameras} />
        </td>
        <td>
          {when(k.created_at)} <span class="muted">by {k.created_by}</span>
        </td>
        <td>{k.expires_at === null ? <span class="muted">never</span> : expired ? <strong class="failed-text">expired {when(k.expires_at)}</strong> : when(k.expires_at)}</td>
        <td>
          {k.last_used_at === null ? (
            <span class="muted">never</span>
          ) : (
            <>
              {when(k.last_used_at)} <span class="muted">({ago(k.last_used_at)})</span>
            </>
          )}
        </td>
        <td class="row-actions">
          <button type="button" class="small danger" aria-expanded={confirming} aria-label={`Revoke ${k.name}`} onClick={() => onConfirm(!confirming)}>
            Revoke…
          </button>
        </td>
      </tr>
      {confirming && (
        <tr class="row-panel">
          <td colSpan={7}>
            <RevokeKey apiKey={k} onCancel={() => onConfirm(false)} onRevoked={onRevoked} />
          </td>
        </tr>
      )}
    </>
  );
}

function RevokeKey({ apiKey: k, onCancel, onRevoked }: { apiKey: ApiKey; onCancel: () => void; onRevoked: () => void }) {
  const outcome = useOutcome('Not revoked:');
  const confirm = useRef<HTMLButtonElement>(null);
  useFirstFocus(confirm);
  const revoke = () =>
    outcome.run(async () => {
      await apiDelete(`/keys/${encodeURIComponent(k.id)}`);
      onRevoked();
      return '';
    });
  return (
    <div class="confirm" role="alertdialog" aria-labelledby={`revoke-${k.id}-text`}>
      <p id={`revoke-${k.id}-text`}>
        Revoke the key <strong>“{k.name}”</strong>? Every request with it is refused from now on; this cannot be undone. A system that still needs access needs a new key.
      </p>
      {outcome.notices}
      <div class="button-row">
        <button type="button" class="danger" ref={confirm} disabled={outcome.busy} onClick={revoke}>
          Yes, revoke “{k.name}”
        </button>
        <button type="button" onClick={onCancel}>
          Keep it
        </button>
      </div>
    </div>
  );
}

/**
 * The new key's secret, the one time it exists outside the client: selected for copying, with a
 * copy button. It lives in this page's state only; leaving or reloading the page drops it.
 */
function NewKeySecret({ name, secret, onDismiss }: { name: string; secret: string; onDismiss: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  useFirstFocus(field, secret, true);
  const copy = async () => {
    field.current?.select();
    try {
      // the Clipboard API needs a secure context (HTTPS or localhost); the selection works anywhere
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(secret);
      else if (!document.execCommand('copy')) throw new Error('not copied');
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser did not copy it: the key is selected, copy it with Ctrl+C.');
    }
  };
  return (
    <section class="card secret-card" aria-labelledby="secret-title">
      <h2 id="secret-title">The new key “{name}”: copy it now</h2>
      <p>
        <strong>This is the only time the key is shown.</strong> The appliance keeps only a hash of it: once you leave this page it cannot be shown again. If it is lost, revoke it and
        create another.
      </p>
      <div class="secret-row">
        <label for="new-key-secret" class="visually-hidden">
          The new API key
        </label>
        <input id="new-key-secret" ref={field} class="secret" type="text" readOnly spellcheck={false} autocomplete="off" value={secret} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" class="primary" onClick={copy}>
          Copy
        </button>
      </div>
      <p class="hint" role="status">
        {copied ?? (
          <>
            A client sends it as <code>Authorization: Bearer {secret.slice(0, 8)}…</code>, or as the password of Basic credentials with the user name <code>{API_KEY_USER}</code>.
          </>
        )}
      </p>
      <div class="button-row">
        <button type="button" onClick={onDismiss}>
          I have stored the key
        </button>
      </div>
    </section>
  );
}

function CreateKey({ onCreated }: { onCreated: (created: { key: ApiKey; secret: string }) => void }) {
  const outcome = useOutcome('Not created:');
  const create = (e: Event) => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const data = new FormData(formEl);
    return outcome.run(async () => {
      const cameras = parseCameras(String(data.get('cameras') ?? ''));
      const expires = String(data.get('expires_at') ?? '');
      const answer = await apiPostJson<{ key: ApiKey; secret: string }>('/keys', {
        name: String(data.get('name') ?? '').trim(),
        role: String(data.get('role')),
        ...(cameras ? { cameras } : {}),
        // datetime-local is the admin's local time: sent with its zone (as UTC)
        expires_at: expires ? new Date(expires).toISOString() : null,
      });
      formEl.reset();
      onCreated(answer);
      // the key is shown at the top of the page, where it takes the focus
      scrollTo({ top: 0 });
      return '';
    });
  };
  return (
    <section class="card" aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <form class="grid-form access-form" onSubmit={create} aria-labelledby="create-key-title">
        <label for="new-key-name">Name</label>
        <input id="new-key-name" name="name" type="text" autocomplete="off" maxLength={100} required placeholder="VMS at the gatehouse" aria-describedby="new-key-name-hint" />
        <p id="new-key-name-hint" class="hint">
          What uses it, to recognise it here and in the audit trail.
        </p>
        <label for="new-key-role">Role</label>
        <RoleSelect id="new-key-role" value="viewer" />
        <label for="new-key-cameras">Cameras (optional)</label>
        <input id="new-key-cameras" name="cameras" type="text" autocomplete="off" spellcheck={false} placeholder="All cameras" aria-describedby="new-key-cameras-hint" />
        <p id="new-key-cameras-hint" class="hint">
          {CAMERAS_HINT}
        </p>
        <label for="new-key-expires">Expires (optional)</label>
        <input id="new-key-expires" name="expires_at" type="datetime-local" aria-describedby="new-key-expires-hint" />
        <p id="new-key-expires-hint" class="hint">
          Your local time. Empty: the key works until it is revoked.
        </p>
        {outcome.notices}
        <button type="submit" class="primary" disabled={outcome.busy}>
          Create key
        </button>
      </form>
    </section>
  );
}
