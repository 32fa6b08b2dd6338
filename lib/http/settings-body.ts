// A small settings body (PUT /cameras/<camera>): JSON, or the same as form fields (urlencoded or
// multipart without files). Values arrive as JSON gives them, or as strings from a form; the route
// reads each field with the types it allows.
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { invalidParameter } from './errors.js';

const LIMIT = '64kb';

export function settingsBody() {
  const parse = koaBody({
    json: true,
    urlencoded: true,
    multipart: true,
    text: false,
    jsonLimit: LIMIT,
    formLimit: LIMIT,
    jsonStrict: true,
    formidable: { maxFiles: 0, maxFields: 20, maxFieldsSize: 64 * 1024 },
  });
  return async (ctx: Context, next: Next) => {
    const length = Number(ctx.get('content-length') || 0);
    const empty = !ctx.request.type && (length === 0 || Number.isNaN(length));
    if (!empty && !ctx.is('json', 'urlencoded', 'multipart')) {
      throw invalidParameter('the request body must be JSON (application/json) or form fields (application/x-www-form-urlencoded or multipart/form-data)');
    }
    try {
      if (!empty) await parse(ctx, async () => {});
    } catch (err) {
      const e = err as Error & { status?: number };
      throw invalidParameter(`the request body cannot be read: ${e.message.slice(0, 200)}`);
    }
    const body = ctx.request.body as unknown;
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) throw invalidParameter('the request body must be a JSON object');
    const fields: Record<string, unknown> = { ...((body ?? {}) as Record<string, unknown>) };
    // Form fields sent twice come as arrays: a client error, as for uploads.
    for (const [name, value] of Object.entries(fields)) {
      if (Array.isArray(value) && !ctx.is('json')) throw invalidParameter(`the field "${name}" was sent ${value.length} times`);
    }
    ctx.state.fields = fields;
    await next();
  };
}
