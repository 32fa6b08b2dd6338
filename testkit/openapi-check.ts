// Checks a response the tests received against openapi/openapi.json: the path and method must
// be an operation of the document (or a request the document's `x-unrouted-requests` covers),
// the status one of its responses, the required headers present, the media type one it lists,
// and a JSON body valid against its schema (ajv, JSON Schema 2020-12). The test helpers call it
// on every response, so the document cannot drift from the code.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

export const OPENAPI_PATH = path.resolve('openapi/openapi.json');
const DOC_ID = 'openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export interface ReceivedResponse {
  method: string;
  /** Absolute URL or path with query. */
  url: string;
  status: number;
  /** Header names in lower case. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** Parsed JSON, or text, or undefined when there was no body. */
  body: unknown;
}

export class OpenApiMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpenApiMismatch';
  }
}

type Json = Record<string, any>;

interface Operation {
  template: string;
  pattern: RegExp;
  ops: Record<string, Json>;
}

let compiled: { doc: Json; operations: Operation[]; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | null = null;

export function openApiDocument(): Json {
  return load().doc;
}

/** An ajv for the document's dialect: JSON Schema 2020-12 with formats, strict about the rest. */
export function openApiAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  // ajv-formats ships as CommonJS: under NodeNext its default export is the module object.
  const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv2020) => void;
  addFormats(ajv);
  return ajv;
}

function load() {
  if (compiled) return compiled;
  const doc = JSON.parse(fs.readFileSync(OPENAPI_PATH, 'utf8')) as Json;
  const ajv = openApiAjv();
  // The whole document is registered so that `#/components/...` refs resolve inside it; the
  // keywords of OpenAPI's own objects are declared (ajv would otherwise refuse unknown ones).
  for (const k of Object.keys(doc)) if (!['$schema', '$id'].includes(k)) ajv.addKeyword(k);
  ajv.addSchema(doc, DOC_ID);
  const operations = Object.entries(doc.paths as Record<string, Json>)
    // Concrete paths win over templated ones, as OpenAPI says.
    .sort(([a], [b]) => Number(a.includes('{')) - Number(b.includes('{')))
    .map(([template, item]) => ({
      template,
      pattern: new RegExp('^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '$'),
      ops: Object.fromEntries(METHODS.filter((m) => item[m]).map((m) => [m, item[m] as Json])),
    }));
  compiled = { doc, operations, ajv, validators: new Map() };
  return compiled;
}

/** Throws OpenApiMismatch when the response is not one the document describes. */
export function checkResponse(res: ReceivedResponse): void {
  const { doc, operations } = load();
  const method = res.method.toLowerCase();
  const pathname = new URL(res.url, 'http://x').pathname;
  const where = `${res.method.toUpperCase()} ${pathname} -> ${res.status}`;
  const operation = operations.find((o) => o.pattern.test(pathname));
  const opMethod = method === 'head' ? 'get' : method;
  // Where the response may be described: the operation, else the catch-all for unrouted
  // requests; and, whatever the path, the answers to requests that are not valid HTTP.
  const candidates: [string, string][] = [];
  if (operation?.ops[opMethod]) {
    candidates.push([`${opMethod} ${operation.template}`, `/paths/${escapePointer(operation.template)}/${opMethod}/responses/${res.status}`]);
  } else {
    candidates.push(['x-unrouted-requests', `/x-unrouted-requests/responses/${res.status}`]);
  }
  candidates.push(['x-malformed-requests', `/x-malformed-requests/responses/${res.status}`]);
  const problems: string[] = [];
  for (const [source, at] of candidates) {
    const node = pointerGet(doc, at);
    if (!node) {
      problems.push(`${source}: status ${res.status} is not documented`);
      continue;
    }
    const [response, pointer] = resolve(node, at);
    const problem = matchResponse(response, pointer, res, method === 'head');
    if (!problem) return;
    problems.push(`${source}: ${problem}`);
  }
  throw new OpenApiMismatch(`${where} does not match openapi/openapi.json:\n  ${problems.join('\n  ')}\n  body: ${excerpt(res.body)}`);
}

function matchResponse(response: Json, pointer: string, res: ReceivedResponse, head: boolean): string | null {
  for (const [name, headerRef] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
    const [header] = resolve(headerRef, `${pointer}/headers/${escapePointer(name)}`);
    if (header.required && headerOf(res, name) === undefined) return `required header ${name} is missing`;
  }
  const content = response.content as Record<string, Json> | undefined;
  const hasBody = !head && res.body !== undefined && res.body !== '';
  if (!content) return hasBody ? 'the document says no body, but there is one' : null;
  if (head) return null;
  const type = String(headerOf(res, 'content-type') ?? '').split(';')[0].trim().toLowerCase();
  const mediaType = Object.keys(content).find((k) => k.toLowerCase() === type);
  if (!mediaType) return `content type "${type}" is not one of ${Object.keys(content).join(', ')}`;
  if (!/json/.test(type)) return typeof res.body === 'string' || res.body === undefined ? null : 'expected a text body';
  const validate = validator(`${pointer}/content/${escapePointer(mediaType)}/schema`);
  if (validate(res.body)) return null;
  return `body: ${load().ajv.errorsText(validate.errors, { separator: '; ', dataVar: 'body' })}`;
}

function validator(pointer: string): ValidateFunction {
  const { ajv, validators } = load();
  let v = validators.get(pointer);
  if (!v) {
    v = ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
    validators.set(pointer, v);
  }
  return v;
}

/** Follows `$ref`s (local ones: `#/...`) to the object and its JSON pointer. */
function resolve(node: Json, pointer: string): [Json, string] {
  let at = node;
  let where = pointer;
  while (at && typeof at.$ref === 'string') {
    where = at.$ref.replace(/^#/, '');
    at = pointerGet(load().doc, where);
  }
  return [at, where];
}

function pointerGet(doc: Json, pointer: string): Json {
  return pointer
    .split('/')
    .slice(1)
    .reduce((node: any, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function headerOf(res: ReceivedResponse, name: string): string | undefined {
  const h = res.headers;
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const v = (h as Record<string, string | string[] | undefined>)[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
}

function excerpt(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text === undefined ? '(none)' : text.length > 600 ? `${text.slice(0, 600)}...` : text;
}
