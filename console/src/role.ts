// What the signed-in user may do, for the pages to offer only that: the session's role, handed
// down from the shell through a context. The API refuses anyway; a page shows no button its
// user cannot use.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

export type Role = 'viewer' | 'operator' | 'admin';

export const ROLES: Role[] = ['viewer', 'operator', 'admin'];

/** The roles in words, for a select and the top bar. */
export const ROLE_LABEL: Record<Role, string> = { viewer: 'Viewer', operator: 'Operator', admin: 'Admin' };

/** What each role may do, in a line. */
export const ROLE_SCOPE: Record<Role, string> = {
  viewer: 'reads only',
  operator: 'also changes cameras and runs jobs',
  admin: 'everything, users, keys and the audit trail included',
};

/** Whether `role` may do what `needed` may (each role may all the one below it may). */
export const allows = (role: Role, needed: Role) => ROLES.indexOf(role) >= ROLES.indexOf(needed);

/** Until the shell provides one, the least: a page offers nothing it cannot know is allowed. */
export const RoleContext = createContext<Role>('viewer');

export const useRole = () => useContext(RoleContext);

/** Whether the signed-in user may do what `needed` may. */
export const useAllows = (needed: Role) => allows(useContext(RoleContext), needed);
