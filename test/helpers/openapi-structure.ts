// Structural checks of an OpenAPI 3.1 document: a JSON Schema of the objects this project uses
// (written from the OpenAPI 3.1.0 specification's object tables, stricter where the spec says
// "REQUIRED"), then what a schema cannot say: every $ref resolves, every path template's
// parameters are declared, operationIds are unique, security requirements and tags name
// declared ones, and every schema in the document is itself valid JSON Schema 2020-12.
import { openApiAjv } from '../../testkit/openapi-check.js';

type Json = Record<string, any>;

const extensions = { patternProperties: { '^x-': true } };
const ref = { type: 'object', required: ['$ref'], properties: { $ref: { type: 'string', pattern: '^#/' }, summary: { type: 'string' }, description: { type: 'string' } }, additionalProperties: false };
const orRef = (name: string) => ({ if: { type: 'object', required: ['$ref'] }, then: { $ref: '#/$defs/reference' }, else: { $ref: `#/$defs/${name}` } });
const mapOf = (schema: object) => ({ type: 'object', additionalProperties: schema });
const schemaObject = { type: ['object', 'boolean'] };

export const OPENAPI_31_STRUCTURE = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: {
    openapi: { type: 'string', pattern: '^3\\.1\\.\\d+(-.+)?$' },
    jsonSchemaDialect: { type: 'string', format: 'uri' },
    info: {
      type: 'object',
      required: ['title', 'version'],
      properties: {
        title: { type: 'string', minLength: 1 },
        summary: { type: 'string' },
        description: { type: 'string' },
        termsOfService: { type: 'string', format: 'uri' },
        contact: { type: 'object' },
        license: { type: 'object', required: ['name'] },
        version: { type: 'string', minLength: 1 },
      },
      ...extensions,
      additionalProperties: false,
    },
    servers: { type: 'array', items: { $ref: '#/$defs/server' } },
    paths: { type: 'object', patternProperties: { '^/': { $ref: '#/$defs/pathItem' }, '^x-': true }, additionalProperties: false },
    components: {
      type: 'object',
      properties: {
        schemas: mapOf(schemaObject),
        responses: mapOf(orRef('response')),
        parameters: mapOf(orRef('parameter')),
        headers: mapOf(orRef('header')),
        securitySchemes: mapOf(orRef('securityScheme')),
        requestBodies: mapOf(orRef('requestBody')),
        examples: mapOf({ type: 'object' }),
        links: mapOf({ type: 'object' }),
        callbacks: mapOf({ type: 'object' }),
        pathItems: mapOf({ $ref: '#/$defs/pathItem' }),
      },
      propertyNames: { anyOf: [{ pattern: '^x-' }, { enum: ['schemas', 'responses', 'parameters', 'headers', 'securitySchemes', 'requestBodies', 'examples', 'links', 'callbacks', 'pathItems'] }] },
    },
    security: { type: 'array', items: { $ref: '#/$defs/securityRequirement' } },
    tags: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, description: { type: 'string' } } } },
    webhooks: mapOf({ type: 'object' }),
    externalDocs: { type: 'object', required: ['url'] },
  },
  ...extensions,
  additionalProperties: false,
  $defs: {
    reference: ref,
    server: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, description: { type: 'string' }, variables: { type: 'object' } }, ...extensions, additionalProperties: false },
    pathItem: {
      type: 'object',
      properties: {
        summary: { type: 'string' },
        description: { type: 'string' },
        parameters: { type: 'array', items: orRef('parameter') },
        servers: { type: 'array', items: { $ref: '#/$defs/server' } },
        ...Object.fromEntries(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].map((m) => [m, { $ref: '#/$defs/operation' }])),
      },
      ...extensions,
      additionalProperties: false,
    },
    operation: {
      type: 'object',
      // The specification makes `responses` optional; an operation without any is not an API.
      required: ['responses'],
      properties: {
        tags: { type: 'array', items: { type: 'string' } },
        summary: { type: 'string' },
        description: { type: 'string' },
        operationId: { type: 'string' },
        parameters: { type: 'array', items: orRef('parameter') },
        requestBody: orRef('requestBody'),
        responses: {
          type: 'object',
          minProperties: 1,
          patternProperties: { '^[1-5](?:[0-9]{2}|XX)$': orRef('response'), '^x-': true },
          properties: { default: orRef('response') },
          additionalProperties: false,
        },
        callbacks: { type: 'object' },
        deprecated: { type: 'boolean' },
        security: { type: 'array', items: { $ref: '#/$defs/securityRequirement' } },
        servers: { type: 'array', items: { $ref: '#/$defs/server' } },
        externalDocs: { type: 'object', required: ['url'] },
      },
      ...extensions,
      additionalProperties: false,
    },
    parameter: {
      type: 'object',
      required: ['name', 'in'],
      properties: {
        name: { type: 'string', minLength: 1 },
        in: { enum: ['query', 'header', 'path', 'cookie'] },
        description: { type: 'string' },
        required: { type: 'boolean' },
        deprecated: { type: 'boolean' },
        allowEmptyValue: { type: 'boolean' },
        style: { type: 'string' },
        explode: { type: 'boolean' },
        allowReserved: { type: 'boolean' },
        schema: schemaObject,
        content: { type: 'object', minProperties: 1, maxProperties: 1 },
        example: true,
        examples: { type: 'object' },
      },
      oneOf: [{ required: ['schema'] }, { required: ['content'] }],
      // Path parameters are always required.
      if: { properties: { in: { const: 'path' } } },
      then: { required: ['required'], properties: { required: { const: true } } },
      ...extensions,
      additionalProperties: false,
    },
    header: {
      type: 'object',
      properties: { description: { type: 'string' }, required: { type: 'boolean' }, deprecated: { type: 'boolean' }, schema: schemaObject, content: { type: 'object' }, style: { const: 'simple' }, explode: { type: 'boolean' }, example: true, examples: { type: 'object' } },
      oneOf: [{ required: ['schema'] }, { required: ['content'] }],
      ...extensions,
      additionalProperties: false,
    },
    mediaType: {
      type: 'object',
      properties: { schema: schemaObject, example: true, examples: { type: 'object' }, encoding: mapOf({ $ref: '#/$defs/encoding' }) },
      ...extensions,
      additionalProperties: false,
    },
    encoding: {
      type: 'object',
      properties: { contentType: { type: 'string' }, headers: { type: 'object' }, style: { type: 'string' }, explode: { type: 'boolean' }, allowReserved: { type: 'boolean' } },
      ...extensions,
      additionalProperties: false,
    },
    requestBody: {
      type: 'object',
      required: ['content'],
      properties: { description: { type: 'string' }, content: mapOf({ $ref: '#/$defs/mediaType' }), required: { type: 'boolean' } },
      ...extensions,
      additionalProperties: false,
    },
    response: {
      type: 'object',
      required: ['description'],
      properties: {
        description: { type: 'string' },
        headers: mapOf(orRef('header')),
        content: mapOf({ $ref: '#/$defs/mediaType' }),
        links: { type: 'object' },
      },
      ...extensions,
      additionalProperties: false,
    },
    securityScheme: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['apiKey', 'http', 'mutualTLS', 'oauth2', 'openIdConnect'] },
        description: { type: 'string' },
        name: { type: 'string' },
        in: { enum: ['query', 'header', 'cookie'] },
        scheme: { type: 'string' },
        bearerFormat: { type: 'string' },
        flows: { type: 'object' },
        openIdConnectUrl: { type: 'string', format: 'uri' },
      },
      allOf: [
        { if: { properties: { type: { const: 'apiKey' } } }, then: { required: ['name', 'in'] } },
        { if: { properties: { type: { const: 'http' } } }, then: { required: ['scheme'] } },
      ],
      ...extensions,
      additionalProperties: false,
    },
    securityRequirement: mapOf({ type: 'array', items: { type: 'string' } }),
  },
};

/** Every problem found in `doc`; empty when it is a structurally valid OpenAPI 3.1 document. */
export function openApiProblems(doc: Json): string[] {
  const problems: string[] = [];
  const ajv = openApiAjv();
  const validate = ajv.compile(OPENAPI_31_STRUCTURE);
  if (!validate(doc)) {
    for (const e of validate.errors ?? []) problems.push(`structure: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
  }

  // Every local $ref resolves.
  walk(doc, '', (node, at) => {
    if (typeof node.$ref !== 'string') return;
    if (!node.$ref.startsWith('#/')) problems.push(`${at}: only local $refs are used, got ${node.$ref}`);
    else if (get(doc, node.$ref.slice(1)) === undefined) problems.push(`${at}: $ref ${node.$ref} does not resolve`);
  });

  const operationIds = new Set<string>();
  const tags = new Set<string>((doc.tags ?? []).map((t: Json) => t.name));
  const schemes = new Set(Object.keys(doc.components?.securitySchemes ?? {}));
  const checkSecurity = (reqs: Json[] | undefined, at: string) => {
    for (const req of reqs ?? []) for (const name of Object.keys(req)) if (!schemes.has(name)) problems.push(`${at}: security scheme ${name} is not declared`);
  };
  checkSecurity(doc.security, 'security');
  for (const [template, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    const templated = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']) {
      const op = item[method];
      if (!op) continue;
      const at = `${method} ${template}`;
      if (op.operationId) {
        if (operationIds.has(op.operationId)) problems.push(`${at}: operationId ${op.operationId} is used twice`);
        operationIds.add(op.operationId);
      }
      for (const tag of op.tags ?? []) if (!tags.has(tag)) problems.push(`${at}: tag ${tag} is not declared`);
      checkSecurity(op.security, at);
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Json) => (p.$ref ? get(doc, p.$ref.slice(1)) : p) as Json);
      const inPath = params.filter((p) => p?.in === 'path').map((p) => p.name);
      for (const name of templated) if (!inPath.includes(name)) problems.push(`${at}: path parameter {${name}} is not declared`);
      for (const name of inPath) if (!templated.includes(name)) problems.push(`${at}: parameter ${name} is declared in: path but not in the template`);
    }
  }

  // Every schema of the document is a valid JSON Schema 2020-12 (ajv compiles it, strictly).
  const schemaAjv = openApiAjv();
  for (const k of Object.keys(doc)) schemaAjv.addKeyword(k);
  schemaAjv.addSchema(doc, 'doc.json');
  walk(doc, '', (node, at) => {
    if (!('schema' in node) || typeof node.schema !== 'object' || at.includes('/schemas/')) return;
    try {
      schemaAjv.compile({ $ref: `doc.json#${at}/schema` });
    } catch (err) {
      problems.push(`${at}/schema: ${(err as Error).message}`);
    }
  });
  for (const name of Object.keys(doc.components?.schemas ?? {})) {
    try {
      schemaAjv.compile({ $ref: `doc.json#/components/schemas/${name}` });
    } catch (err) {
      problems.push(`components/schemas/${name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

function walk(node: unknown, at: string, visit: (node: Json, at: string) => void): void {
  if (!node || typeof node !== 'object') return;
  if (!Array.isArray(node)) visit(node as Json, at);
  for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, visit);
}

function get(doc: Json, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce((n: any, part) => n?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}
