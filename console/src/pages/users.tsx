// The admin's users: who may sign in with a name and password, with which role and cameras
// (GET /users); adding one (POST /users), changing a role, cameras or password (PUT
// /users/<name>, only what changed), removing one after a confirmation (DELETE /users/<name>).
// The appliance refuses what would leave no admin of all cameras; the page shows its words.
import { useRef, useState } from 'preact/hooks';
import { useFirstFocus } from '../components/first-focus.js';
import { apiDelete, apiGet, apiPostJson, apiPutJson, currentSession } from '../api.js';
import { camerasField, Cameras, CAMERAS_HINT, parseCameras, RoleBadge, RoleSelect } from '../components/access-fields.js';
import { Empty, ErrorNotice, Loading } from '../components/notice.js';
import { useOutcome } from '../components/outcome.js';
import { when } from '../format.js';
import { usePoll } from '../poll.js';
import { ROLE_LABEL, ROLES, type Role } from '../role.js';
import type { User } from '../types.js';

/** The API's shortest password (lib/users/http/fields.ts). */
const MIN_PASSWORD = 10;

const userPath = (name: string) => `/users/${encodeURIComponent(name)}`;

/** The row whose panel is open: its change form or its removal's confirmation. */
type Panel = { name: string; what: 'change' | 'remove' } | null;

export function UsersPage() {
  const polled = usePoll(() => apiGet<{ users: User[] }>('/users').then((r) => r.users), 0, 'users');
  const [panel, setPanel] = useState<Panel>(null);
  const [done, setDone] = useState<string | null>(null);
  const me = currentSession()?.user;
  const finished = (message: string) => {
    setPanel(null);
    setDone(message);
    polled.reload();
  };
  const users = polled.data;
  return (
    <main id="main" tabIndex={-1} class="page narrow">
      <h1>Users</h1>
      <p class="lede">Who signs in to the console and the API with a name and password. Viewers read; operators also change cameras and run jobs; admins also manage users, keys and read the audit trail.</p>
      {polled.error && <ErrorNotice error={polled.error} title="Cannot load the users:" />}
      {!users && !polled.error && <Loading what="the users" />}
      {done && (
        <div class="notice notice-ok" role="status">
          {done}
        </div>
      )}
      {users && users.length === 0 && <Empty title="No users yet" />}
      {users && users.length > 0 && (
        <section class="card" aria-labelledby="users-title">
          <h2 id="users-title">
            {users.length} user{users.length === 1 ? '' : 's'}
          </h2>
          <div class="table-wrap">
            <table class="access-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Cameras</th>
                  <th scope="col">Added</th>
                  <th scope="col">Password set</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {users.map((u) => (
                  <UserRow key={u.name} user={u} me={u.name === me} panel={panel?.name === u.name ? panel.what : null} onPanel={(what) => (setDone(null), setPanel(what && { name: u.name, what }))} onDone={finished} />
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <AddUser onAdded={polled.reload} />
    </main>
  );
}

function UserRow({ user: u, me, panel, onPanel, onDone }: { user: User; me: boolean; panel: 'change' | 'remove' | null; onPanel: (what: 'change' | 'remove' | null) => void; onDone: (message: string) => void }) {
  return (
    <>
      <tr data-user={u.name} class={panel ? 'row-open' : undefined}>
        <td>
          <strong>{u.name}</strong>
          {me && <span class="muted"> (you)</span>}
        </td>
        <td>
          <RoleBadge role={u.role} />
        </td>
        <td>
          <Cameras cameras={u.cameras} />
        </td>
        <td class="when">{when(u.created_at)}</td>
        <td class="when">{when(u.password_changed_at)}</td>
        <td class="row-actions">
          <button type="button" class="small" aria-expanded={panel === 'change'} aria-label={`Change ${u.name}`} onClick={() => onPanel(panel === 'change' ? null : 'change')}>
            Change…
          </button>
          <button type="button" class="small danger" aria-expanded={panel === 'remove'} aria-label={`Remove ${u.name}`} onClick={() => onPanel(panel === 'remove' ? null : 'remove')}>
            Remove…
          </button>
        </td>
      </tr>
      {panel && (
        <tr class="row-panel">
          <td colSpan={6}>{panel === 'change' ? <ChangeUser user={u} onCancel={() => onPanel(null)} onDone={onDone} /> : <RemoveUser user={u} me={me} onCancel={() => onPanel(null)} onDone={onDone} />}</td>
        </tr>
      )}
    </>
  );
}

function ChangeUser({ user: u, onCancel, onDone }: { user: User; onCancel: () => void; onDone: (message: string) => void }) {
  const outcome = useOutcome('Not changed:');
  const first = useRef<HTMLSelectElement>(null);
  useFirstFocus(first);
  const save = (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    return outcome.run(async () => {
      // only what the admin changed: an unchanged field stays out of the request and the audit trail
      const body: { role?: Role; cameras?: string[] | null; password?: string } = {};
      const role = String(data.get('role')) as Role;
      const cameras = parseCameras(String(data.get('cameras') ?? ''));
      const password = String(data.get('password') ?? '');
      if (role !== u.role) body.role = role;
      if (JSON.stringify(cameras) !== JSON.stringify(u.cameras)) body.cameras = cameras;
      if (password !== '') body.password = password;
      if (Object.keys(body).length === 0) return 'Nothing to change: the user is as shown.';
      await apiPutJson(userPath(u.name), body);
      onDone(`${u.name} is changed: ${Object.keys(body).join(', ')}.`);
      return '';
    });
  };
  const id = `user-${u.name}`;
  return (
    <form class="panel-form" onSubmit={save} aria-label={`Change ${u.name}`}>
      <span>
        <label for={`${id}-role`}>Role</label>
        <select ref={first} id={`${id}-role`} name="role">
          {ROLES.map((r) => (
            <option key={r} value={r} selected={r === u.role}>
              {ROLE_LABEL[r]}
            </option>
          ))}
        </select>
      </span>
      <span>
        <label for={`${id}-cameras`}>Cameras</label>
        <input id={`${id}-cameras`} name="cameras" type="text" spellcheck={false} autocomplete="off" placeholder="All cameras" defaultValue={camerasField(u.cameras)} aria-describedby={`${id}-cameras-hint`} />
        <span id={`${id}-cameras-hint`} class="hint">
          Ids separated by commas; empty: all.
        </span>
      </span>
      <span>
        <label for={`${id}-password`}>New password</label>
        <input id={`${id}-password`} name="password" type="password" autocomplete="new-password" aria-describedby={`${id}-password-hint`} />
        <span id={`${id}-password-hint`} class="hint">
          Empty: unchanged. At least {MIN_PASSWORD} characters.
        </span>
      </span>
      <div class="panel-end">
        {outcome.notices}
        <div class="button-row">
          <button type="submit" class="primary" disabled={outcome.busy}>
            Save changes
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </div>
    </form>
  );
}

function RemoveUser({ user: u, me, onCancel, onDone }: { user: User; me: boolean; onCancel: () => void; onDone: (message: string) => void }) {
  const outcome = useOutcome('Not removed:');
  const confirm = useRef<HTMLButtonElement>(null);
  useFirstFocus(confirm);
  const remove = () =>
    outcome.run(async () => {
      await apiDelete(userPath(u.name));
      onDone(`${u.name} is removed.`);
      return '';
    });
  return (
    <div class="confirm" role="alertdialog" aria-labelledby={`remove-${u.name}-text`}>
      <p id={`remove-${u.name}-text`}>
        Remove <strong>{u.name}</strong>? {me ? 'This is you: you are signed out at once.' : 'They can no longer sign in, and their console sessions end.'} What they did stays in the audit trail.
      </p>
      {outcome.notices}
      <div class="button-row">
        <button type="button" class="danger" ref={confirm} disabled={outcome.busy} onClick={remove}>
          Yes, remove {u.name}
        </button>
        <button type="button" onClick={onCancel}>
          Keep {me ? 'me' : 'them'}
        </button>
      </div>
    </div>
  );
}

function AddUser({ onAdded }: { onAdded: () => void }) {
  const outcome = useOutcome('Not added:');
  const add = (e: Event) => {
    e.preventDefault();
    const formEl = e.currentTarget as HTMLFormElement;
    const data = new FormData(formEl);
    return outcome.run(async () => {
      const cameras = parseCameras(String(data.get('cameras') ?? ''));
      const { user } = await apiPostJson<{ user: User }>('/users', {
        name: String(data.get('name') ?? '').trim(),
        password: String(data.get('password') ?? ''),
        role: String(data.get('role')),
        ...(cameras ? { cameras } : {}),
      });
      formEl.reset();
      onAdded();
      return `${user.name} is added as ${user.role}${user.cameras ? ` of ${user.cameras.join(', ')}` : ''}: they can sign in now.`;
    });
  };
  return (
    <section class="card" aria-labelledby="add-user-title">
      <h2 id="add-user-title">Add a user</h2>
      <form class="grid-form access-form" onSubmit={add} aria-labelledby="add-user-title">
        <label for="new-user-name">Name</label>
        <input id="new-user-name" name="name" type="text" autocomplete="off" spellcheck={false} maxLength={64} required aria-describedby="new-user-name-hint" />
        <p id="new-user-name-hint" class="hint">
          Letters, digits and . _ @ - (what they type to sign in).
        </p>
        <label for="new-user-password">Password</label>
        <input id="new-user-password" name="password" type="password" autocomplete="new-password" required aria-describedby="new-user-password-hint" />
        <p id="new-user-password-hint" class="hint">
          At least {MIN_PASSWORD} characters. Tell it to them yourself: the appliance sends nothing.
        </p>
        <label for="new-user-role">Role</label>
        <RoleSelect id="new-user-role" value="viewer" />
        <label for="new-user-cameras">Cameras (optional)</label>
        <input id="new-user-cameras" name="cameras" type="text" autocomplete="off" spellcheck={false} placeholder="All cameras" aria-describedby="new-user-cameras-hint" />
        <p id="new-user-cameras-hint" class="hint">
          {CAMERAS_HINT}
        </p>
        {outcome.notices}
        <button type="submit" class="primary" disabled={outcome.busy}>
          Add user
        </button>
      </form>
    </section>
  );
}
