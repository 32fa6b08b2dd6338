// HTTP Basic authentication for every endpoint. Credentials are compared in constant time
// (SHA-256 digests through timingSafeEqual, against every configured pair) and never logged.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Credential } from '../config.js';
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

/** Whether `user:password` is one of the configured pairs: compared in constant time, with every pair. */
export function credentialCheck(credentials: Credential[]): (pair: string) => boolean {
  const digests = credentials.map((c) => digest(`${c.user}:${c.password}`));
  return (pair) => {
    const candidate = digest(pair);
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, candidate) || ok; // no early exit
    return ok;
  };
}

/** `user:password` from a `Basic` Authorization header, or null when absent or malformed. */
export function parseBasic(header: string): string | null {
  const match = /^Basic[ \t]+([A-Za-z0-9+/=._~-]+)[ \t]*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  return decoded.includes(':') ? decoded : null;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
