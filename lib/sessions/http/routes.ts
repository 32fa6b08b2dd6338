// /session: the console signs in with the appliance's credentials and gets a session cookie
// (HttpOnly, SameSite=Strict, Secure under TLS, 12 h); GET tells the page whether it is signed
// in and the session's CSRF token, DELETE signs out. sessionAuth() lets every API request that
// carries the cookie (and no Authorization header) through as its user; one that changes
// something must carry the session's X-CSRF-Token header too. docs/console.md argues the design.
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { noteChange } from '../../audit/http/routes.js';
import { REALM, setPrincipal, tooManyAttempts } from '../../http/auth.js';
import type { Principal } from '../../users/roles.js';
import { ApiError, invalidParameter } from '../../http/errors.js';
import { httpDate } from '../../dates.js';
import type { SessionRecord } from '../session-store.js';
import { csrfTokenMatches, type Sessions } from '../sessions.js';

export const SESSION_PATH = '/session';
export const CSRF_HEADER = 'X-CSRF-Token';
/** Under TLS the cookie is `__Host-` prefixed: Secure, Path=/, no Domain, which browsers enforce. */
const COOKIE = 'vaa_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** A sign-in body is two short strings. */
const MAX_BODY_BYTES = 4096;

/**
 * A 401 whose challenge is not Basic: browsers answer a Basic challenge to a page's own request
 * with their password prompt, whose remembered credentials cross-site forms would then carry.
 */
export const sessionUnauthorized = (message: string) =>
  new ApiError(401, 'unauthorized', message, { 'WWW-Authenticate': `Session realm="${REALM}"` });

const cookieName = (ctx: Context) => (ctx.secure ? `__Host-${COOKIE}` : COOKIE);

/** Requests carrying a session cookie and no Authorization header: the session is their credentials. */
export function sessionAuth(sessions: Sessions, isOpen: (ctx: Context) => boolean) {
  return async (ctx: Context, next: Next) => {
    if (ctx.get('authorization') || ctx.path === SESSION_PATH || isOpen(ctx)) return next();
    const token = ctx.cookies.get(cookieName(ctx));
    if (!token) return next();
    const session = await sessions.resolve(token);
    if (!session) throw sessionUnauthorized('the console session has ended: sign in again');
    if (!SAFE_METHODS.has(ctx.method) && !csrfTokenMatches(session, ctx.get(CSRF_HEADER))) {
      throw sessionUnauthorized(`a request that changes something needs the session's ${CSRF_HEADER} header`);
    }
    setPrincipal(ctx, session.principal);
    ctx.state.session = session;
    return next();
  };
}

export function sessionRoutes(router: Router, sessions: Sessions, logger: Logger, address: (ctx: Context) => string): void {
  router.get(SESSION_PATH, async (ctx: Context) => {
    const token = ctx.cookies.get(cookieName(ctx));
    const session = token ? await sessions.resolve(token) : null;
    if (token && !session) clearCookie(ctx);
    answer(ctx, session);
  });

  router.post(SESSION_PATH, async (ctx: Context) => {
    const { user, password } = await readSignIn(ctx);
    const opened = await sessions.open(user, password, address(ctx));
    if (opened && 'throttled' in opened) throw tooManyAttempts(opened.throttled);
    if (!opened) throw sessionUnauthorized('wrong user name or password');
    logger.info({ user }, 'console session opened');
    ctx.cookies.set(cookieName(ctx), opened.token, {
      httpOnly: true,
      sameSite: 'strict',
      secure: ctx.secure,
      path: '/',
      maxAge: opened.session.expiresAt - opened.session.createdAt,
      overwrite: true,
    });
    answer(ctx, opened.session);
  });

  router.delete(SESSION_PATH, async (ctx: Context) => {
    const token = ctx.cookies.get(cookieName(ctx));
    const session = token ? await sessions.resolve(token) : null;
    if (token && session) {
      if (!csrfTokenMatches(session, ctx.get(CSRF_HEADER))) throw sessionUnauthorized(`signing out needs the session's ${CSRF_HEADER} header`);
      await sessions.end(token);
      logger.info({ user: session.user }, 'console session ended');
      ctx.state.user = session.user;
      noteChange(ctx, { action: 'session.ended', target: `user:${session.user}` });
    }
    if (token) clearCookie(ctx);
    answer(ctx, null);
  });
}

function answer(ctx: Context, session: (SessionRecord & { principal?: Principal }) | null): void {
  // It carries the CSRF token: no cache may keep it.
  ctx.set('Cache-Control', 'no-store');
  ctx.body = {
    status: 'success',
    session: session && {
      user: session.user,
      role: session.principal?.role ?? null,
      cameras: session.principal?.cameras ?? null,
      expires_at: httpDate(session.expiresAt),
      csrf_token: session.csrfToken,
    },
  };
}

function clearCookie(ctx: Context): void {
  ctx.cookies.set(cookieName(ctx), '', { httpOnly: true, sameSite: 'strict', secure: ctx.secure, path: '/', maxAge: 0, overwrite: true });
}

/**
 * `{"user": ..., "password": ...}` as JSON: a cross-site form cannot send that content type
 * without the browser asking first (CORS preflight, which the appliance never grants).
 */
async function readSignIn(ctx: Context): Promise<{ user: string; password: string }> {
  if (!ctx.is('application/json')) throw invalidParameter('sign in with a JSON body: {"user": "...", "password": "..."}');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw invalidParameter('the sign-in body is too large');
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw invalidParameter('the sign-in body is not JSON');
  }
  const { user, password } = (body ?? {}) as Record<string, unknown>;
  if (typeof user !== 'string' || typeof password !== 'string' || user === '') {
    throw invalidParameter('sign in with "user" and "password", both strings');
  }
  return { user, password };
}
