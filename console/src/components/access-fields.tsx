// What users and API keys share: a role, shown as a badge and chosen with what it may do, and
// the cameras they are limited to, typed as ids separated by commas (empty: all cameras).
import { ROLE_LABEL, ROLE_SCOPE, ROLES, type Role } from '../role.js';

export function RoleBadge({ role }: { role: Role }) {
  return <span class={`badge badge-role badge-role-${role}`}>{ROLE_LABEL[role]}</span>;
}

export function RoleSelect({ id, name = 'role', value }: { id: string; name?: string; value: Role }) {
  return (
    <select id={id} name={name}>
      {ROLES.map((r) => (
        <option key={r} value={r} selected={r === value}>
          {ROLE_LABEL[r]} — {ROLE_SCOPE[r]}
        </option>
      ))}
    </select>
  );
}

/** A list of cameras as the field shows it: empty for all cameras. */
export const camerasField = (cameras: string[] | null) => (cameras ? cameras.join(', ') : '');

/** The field's text as the API takes it: the ids, or null for all cameras. */
export function parseCameras(text: string): string[] | null {
  const ids = text
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  return ids.length > 0 ? ids : null;
}

export function Cameras({ cameras }: { cameras: string[] | null }) {
  return cameras ? <span class="camera-list">{cameras.join(', ')}</span> : <span class="muted all-cameras">All cameras</span>;
}

export const CAMERAS_HINT = 'Camera ids separated by commas. Empty: all cameras, those added later too.';
