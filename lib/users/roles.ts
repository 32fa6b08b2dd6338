// Who may do what: three roles, each allowed everything the one below it is.
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` may do what `needed` may. */
export function allows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/**
 * Who a request is: a user (Basic or the console's session) or an API key. `cameras` limits it to
 * those cameras (null: all of them).
 */
export interface Principal {
  kind: 'user' | 'key';
  /** The user's name, or the key's id. */
  id: string;
  /** What the audit trail and the log show: the user's name, or `key:<id> (<name>)`. */
  label: string;
  role: Role;
  cameras: string[] | null;
}

/** Whether `principal` may see `camera` at all: a camera outside its set is, to it, no camera. */
export function seesCamera(principal: Principal | undefined, camera: string): boolean {
  return !principal?.cameras || principal.cameras.includes(camera);
}
