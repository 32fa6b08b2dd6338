// GET /openapi.json: the OpenAPI 3.1 description of this API, the very file kept in the
// repository (openapi/openapi.json), which the test suite checks every response against.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';

/** From build/lib/http/routes/ (the compiled code runs from build/) up to the repository's root. */
export const OPENAPI_FILE = fileURLToPath(new URL('../../../../openapi/openapi.json', import.meta.url));

export function openApiRoutes(router: Router): void {
  const document = fs.readFileSync(OPENAPI_FILE);
  router.get('/openapi.json', (ctx: Context) => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = document;
  });
}
