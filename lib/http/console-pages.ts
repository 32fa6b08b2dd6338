// The operator console's files: its one page at `/` and what it loads from `/console/`, the
// bundle that `make build` writes into build/console/ (scripts/build-console.ts, from console/).
// They hold no data and are served without credentials; the page signs in (lib/sessions/) and
// then reads the same REST API as every client. Each answer carries a Content-Security-Policy
// that allows this origin's scripts, styles and fetches only, and no framing.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';

export const CONSOLE_ASSETS_PATH = '/console';
/** From build/lib/console/ to build/console/, where the bundle is. */
export const CONSOLE_BUILD_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface ConsoleFile {
  type: string;
  body: Buffer;
}

/**
 * The policy of every console answer. Result and reference pictures are signed links under
 * PUBLIC_BASE_URL when it is set (their origin may differ from the console's), else this origin.
 */
export function contentSecurityPolicy(publicBaseUrl: string | null): string {
  const media = ["'self'", ...(publicBaseUrl ? [new URL(publicBaseUrl).origin] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${media} blob:`,
    `media-src ${media}`,
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Serves `/` and `/console/<file>`; every other request goes on to authentication and the API. */
export function consolePages(publicBaseUrl: string | null, dir = CONSOLE_BUILD_DIR) {
  const files = readBundle(dir);
  const policy = contentSecurityPolicy(publicBaseUrl);
  return async (ctx: Context, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    let name: string | null = null;
    if (ctx.path === '/') name = 'index.html';
    else if (ctx.path.startsWith(`${CONSOLE_ASSETS_PATH}/`)) name = ctx.path.slice(CONSOLE_ASSETS_PATH.length + 1);
    if (name === null) return next();
    const file = files.get(name);
    if (!file) {
      if (name !== 'index.html') return next(); // an unknown asset: the API's 404 (after authentication)
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The operator console is not built: run `make build`.\n';
      return;
    }
    ctx.set('Content-Security-Policy', policy);
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    // Small files, checked on every load: a new build shows at once.
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = file.type;
    ctx.body = file.body;
  };
}

/** The bundle's files by name, read once at start (a few hundred KB at most). */
function readBundle(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  if (!fs.existsSync(dir)) return files;
  for (const name of fs.readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    if (type) files.set(name, { type, body: fs.readFileSync(path.join(dir, name)) });
  }
  return files;
}
