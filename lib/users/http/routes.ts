// /users and /keys: the admin's endpoints for named users (password, role, cameras) and API keys
// (role, cameras, expiry; the key itself answered once). Each change goes to the audit trail
// with who made it; a password never does.
import type Router from '@koa/router';
import type { Context } from 'koa';
import { noteChange } from '../../audit/http/routes.js';
import { httpDate } from '../../dates.js';
import { invalidParameter, notFound } from '../../http/errors.js';
import { settingsBody } from '../../http/settings-body.js';
import type { ApiKeyRecord, UserRecord } from '../user-store.js';
import type { UserChange, Users } from '../users.js';
import * as field from './fields.js';

export const USERS_PATH = '/users';
export const KEYS_PATH = '/keys';

export const presentUser = (u: UserRecord) => ({
  name: u.name,
  role: u.role,
  cameras: u.cameras,
  created_at: httpDate(u.createdAt),
  password_changed_at: httpDate(u.passwordChangedAt),
});

export const presentKey = (k: ApiKeyRecord) => ({
  id: k.id,
  name: k.name,
  role: k.role,
  cameras: k.cameras,
  created_by: k.createdBy,
  created_at: httpDate(k.createdAt),
  expires_at: k.expiresAt === null ? null : httpDate(k.expiresAt),
  last_used_at: k.lastUsedAt === null ? null : httpDate(k.lastUsedAt),
});

/** The audit's view of a user: everything but the password. */
const audited = (u: UserRecord) => ({ role: u.role, cameras: u.cameras });

export function userRoutes(router: Router, users: Users): void {
  router.get(USERS_PATH, async (ctx: Context) => {
    ctx.body = { status: 'success', users: (await users.list()).map(presentUser) };
  });

  router.post(USERS_PATH, settingsBody(), async (ctx: Context) => {
    const f = ctx.state.fields as Record<string, unknown>;
    field.unknownFields(f, ['name', 'password', 'role', 'cameras']);
    const name = field.userName(f.name);
    const user = await users.create(name, field.password(f.password), field.role(f.role), field.cameras(f.cameras));
    noteChange(ctx, { action: 'user.created', target: `user:${name}`, after: audited(user) });
    ctx.body = { status: 'success', user: presentUser(user) };
  });

  router.put(`${USERS_PATH}/:name`, settingsBody(), async (ctx: Context) => {
    const f = ctx.state.fields as Record<string, unknown>;
    field.unknownFields(f, ['password', 'role', 'cameras']);
    const change: UserChange = {};
    if (f.password !== undefined) change.password = field.password(f.password);
    if (f.role !== undefined) change.role = field.role(f.role);
    if ('cameras' in f) change.cameras = field.cameras(f.cameras);
    if (Object.keys(change).length === 0) throw invalidParameter('send at least one of "password", "role" and "cameras"');
    const { before, after } = await users.update(String(ctx.params.name), change);
    noteChange(ctx, {
      action: 'user.changed',
      target: `user:${after.name}`,
      before: { ...audited(before), ...(change.password ? { password: 'old' } : {}) },
      after: { ...audited(after), ...(change.password ? { password: 'new' } : {}) },
    });
    ctx.body = { status: 'success', user: presentUser(after) };
  });

  router.delete(`${USERS_PATH}/:name`, async (ctx: Context) => {
    const removed = await users.delete(String(ctx.params.name));
    noteChange(ctx, { action: 'user.deleted', target: `user:${removed.name}`, before: audited(removed) });
    ctx.body = { status: 'success', user: presentUser(removed) };
  });

  router.get(KEYS_PATH, async (ctx: Context) => {
    ctx.body = { status: 'success', keys: (await users.listKeys()).map(presentKey) };
  });

  router.post(KEYS_PATH, settingsBody(), async (ctx: Context) => {
    const f = ctx.state.fields as Record<string, unknown>;
    field.unknownFields(f, ['name', 'role', 'cameras', 'expires_at']);
    const { record, key } = await users.createKey(field.keyName(f.name), field.role(f.role), field.cameras(f.cameras), field.expiresAt(f.expires_at), String(ctx.state.user));
    noteChange(ctx, { action: 'key.created', target: `key:${record.id}`, after: { name: record.name, role: record.role, cameras: record.cameras, expires_at: presentKey(record).expires_at } });
    // The key is in no other answer: the table keeps only a hash of it.
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'success', key: presentKey(record), secret: key };
  });

  router.delete(`${KEYS_PATH}/:id`, async (ctx: Context) => {
    const id = String(ctx.params.id);
    if (!/^[A-Za-z0-9_-]{12}$/.test(id)) throw notFound(`no API key "${id.slice(0, 40)}"`);
    const revoked = await users.revokeKey(id);
    noteChange(ctx, { action: 'key.revoked', target: `key:${id}`, before: { name: revoked.name, role: revoked.role, cameras: revoked.cameras } });
    ctx.body = { status: 'success', key: presentKey(revoked) };
  });
}
