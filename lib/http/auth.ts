// HTTP Basic authentication for every endpoint. Credentials are compared in constant time
// (SHA-256 digests through timingSafeEqual, against every configured pair) and never logged.
import type { Context, Next } from 'koa';
import type { Credential } from '../config.js';
import { credentialCheck } from '../credentials.js';
import { unauthorized } from './errors.js';

export const REALM = 'video-analytics';

export interface BasicAuthOptions {
  credentials: Credential[];
  /** Lets a request through without the header (e.g. a result link carrying a valid signature). */
  bypass?: (ctx: Context) => boolean;
}

export function basicAuth({ credentials, bypass }: BasicAuthOptions) {
  const known = credentialCheck(credentials);
  return async (ctx: Context, next: Next) => {
    if (bypass?.(ctx)) return next();
    const presented = parseBasic(ctx.get('authorization'));
    if (presented === null) throw unauthorized(REALM);
    if (!known(presented)) throw unauthorized(REALM, 'wrong credentials');
    // Whose request it is: idempotency keys are kept per user (idempotency.ts).
    ctx.state.user = presented.slice(0, presented.indexOf(':'));
    return next();
  };
}

/** `user:password` from a `Basic` Authorization header, or null when absent or malformed. */
export function parseBasic(header: string): string | null {
  const match = /^Basic[ \t]+([A-Za-z0-9+/=._~-]+)[ \t]*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded.includes(':') ? decoded : null;
}
