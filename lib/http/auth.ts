// Who a request is, from its Authorization header: Basic with a user's name and password (or the
// `apikey` user with an API key as password, for clients that speak only Basic), or
// `Bearer <API key>`. The sign-in throttle answers 429 before any password is hashed.
// Credentials are never logged. The console's session (lib/sessions/) runs before this and
// sets the principal itself.
import type { Context, Next } from 'koa';
import { API_KEY_USER } from '../users/api-key-format.js';
import type { Authenticator, SignInResult } from '../users/authenticator.js';
import type { Principal } from '../users/roles.js';
import { ApiError, unauthorized } from './errors.js';

export const REALM = 'video-analytics';

export interface AuthOptions {
  authenticator: Authenticator;
  /** The client's address (lib/http/client-address.ts). */
  address: (ctx: Context) => string;
  /** Lets a request through without the header (a signed link, a console session, the sign-in). */
  bypass?: (ctx: Context) => boolean;
}

export const tooManyAttempts = (retryAfterS: number) =>
  new ApiError(429, 'too_many_requests', `too many failed sign-ins from this address or for this user: try again in ${retryAfterS} s`, {
    'Retry-After': String(retryAfterS),
  });

export function authenticate({ authenticator, address, bypass }: AuthOptions) {
  return async (ctx: Context, next: Next) => {
    if (bypass?.(ctx)) return next();
    const header = ctx.get('authorization');
    const from = address(ctx);
    const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    let result: SignInResult;
    if (bearer) {
      result = await authenticator.apiKey(bearer[1], from);
    } else {
      const presented = parseBasic(header);
      if (presented === null) throw unauthorized(REALM);
      const colon = presented.indexOf(':');
      const [user, password] = [presented.slice(0, colon), presented.slice(colon + 1)];
      result = user === API_KEY_USER ? await authenticator.apiKey(password, from) : await authenticator.password(user, password, from, 'basic');
    }
    if (result.outcome === 'throttled') throw tooManyAttempts(result.retryAfterS);
    if (result.outcome === 'wrong') throw unauthorized(REALM, 'wrong credentials');
    setPrincipal(ctx, result.principal);
    return next();
  };
}

/** Whose request it is: its rights (access.ts) and, for idempotency keys, its owner (`ctx.state.user`). */
export function setPrincipal(ctx: Context, principal: Principal): void {
  ctx.state.principal = principal;
  ctx.state.user = principal.kind === 'user' ? principal.id : `key:${principal.id}`;
}

/** `user:password` from a `Basic` Authorization header, or null when absent or malformed. */
export function parseBasic(header: string): string | null {
  const match = /^Basic[ \t]+([A-Za-z0-9+/=._~-]+)[ \t]*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded.includes(':') ? decoded : null;
}
