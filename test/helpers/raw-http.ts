// Requests as raw bytes on a socket, for what fetch refuses to send (NUL bytes and bare CRs in
// headers, other auth schemes, bodies that lie about their length, uploads cut off mid-way).
// Responses are parsed by hand and, like api()'s, checked against the OpenAPI document.
import net from 'node:net';
import tls from 'node:tls';
import { checkResponse } from '../../testkit/openapi-check.js';

export interface RawResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON when the type says JSON, else text. */
  body: any;
  /** ms from the first byte sent to the whole response received. */
  ms: number;
}

export interface RawConnection {
  socket: net.Socket;
  /** Resolves with the first complete response (even while the request is still being sent). */
  response: Promise<RawResponse>;
}

/** Opens a connection to the URL's host (TLS for https, any certificate) and starts reading. */
export function rawConnect(url: string): RawConnection {
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const socket =
    u.protocol === 'https:'
      ? tls.connect({ host: u.hostname, port, rejectUnauthorized: false })
      : net.connect({ host: u.hostname, port });
  const started = Date.now();
  const response = new Promise<RawResponse>((resolve, reject) => {
    let data = Buffer.alloc(0);
    const tryParse = (ended: boolean) => {
      const parsed = parseResponse(data, ended);
      if (parsed) {
        resolve({ ...parsed, ms: Date.now() - started });
        return true;
      }
      return false;
    };
    socket.on('data', (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      tryParse(false);
    });
    socket.on('end', () => {
      if (!tryParse(true)) reject(new Error(`connection closed without a complete response: ${JSON.stringify(data.toString('latin1').slice(0, 300))}`));
    });
    socket.on('error', (err) => {
      if (!tryParse(true)) reject(err);
    });
  });
  response.catch(() => {}); // callers that only send may never await it
  return { socket, response };
}

/** Sends `request` as it is (it should say `Connection: close`) and returns the checked response. */
export async function rawRequest(url: string, request: Buffer | string): Promise<RawResponse> {
  const { socket, response } = rawConnect(url);
  socket.on('error', () => {}); // the server may close while we write: the response still counts
  socket.write(request);
  try {
    const res = await response;
    checkRaw(request, res);
    return res;
  } finally {
    socket.destroy();
  }
}

/** Checks a raw exchange against the OpenAPI document, taking method and path from the request line. */
export function checkRaw(request: Buffer | string, res: RawResponse): void {
  const line = Buffer.from(request).subarray(0, 8192).toString('latin1').split('\r\n')[0];
  const [method = 'GET', target = '/'] = line.split(' ');
  let url = '/';
  try {
    url = new URL(target, 'http://x').pathname;
  } catch {
    /* not a request target at all: only the malformed-request answers can match */
  }
  checkResponse({ method, url, status: res.status, headers: res.headers, body: res.body });
}

/** Builds a request: request line, headers (CRLF-joined, as given), body. */
export function httpRequest(method: string, target: string, headers: [string, string | number][], body?: Buffer): Buffer {
  const head = [`${method} ${target} HTTP/1.1`, ...headers.map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
}

function parseResponse(data: Buffer, ended: boolean): Omit<RawResponse, 'ms'> | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const colon = l.indexOf(':');
    const name = l.slice(0, colon).trim().toLowerCase();
    headers[name] = headers[name] ? `${headers[name]}, ${l.slice(colon + 1).trim()}` : l.slice(colon + 1).trim();
  }
  let raw: Buffer;
  const rest = data.subarray(end + 4);
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (rest.length < length) return null;
    raw = rest.subarray(0, length);
  } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const decoded = dechunk(rest);
    if (!decoded) return null;
    raw = decoded;
  } else {
    if (!ended && status !== 204 && status !== 304) return null;
    raw = rest;
  }
  const text = raw.toString('utf8');
  const body = /json/.test(headers['content-type'] ?? '') && text ? JSON.parse(text) : text || undefined;
  return { status, headers, body };
}

function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    if (data.length < eol + 2 + size + 2) return null;
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}
