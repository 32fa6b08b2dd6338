// The console speaks to the appliance's REST API like any client: same paths, same answers. It
// is signed in with a session cookie (lib/sessions/), which the browser sends by itself; every
// request that changes something adds the session's CSRF token. An error answer becomes an
// ApiError carrying the API's own message, which the pages show as it is.
import type { Role } from './role.js';

export interface Session {
  user: string;
  /** Null when the appliance names none: the console then offers the least. */
  role: Role | null;
  /** The cameras the user is limited to; null: all. */
  cameras: string[] | null;
  expires_at: string;
  csrf_token: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let session: Session | null = null;
let onSignedOut: () => void = () => {};

/** Called when the appliance answers 401 to a signed-in request: the session has ended. */
export function whenSignedOut(listener: () => void): void {
  onSignedOut = listener;
}

export const currentSession = () => session;

async function parse<T>(res: Response, path: string): Promise<T> {
  const type = res.headers.get('content-type') ?? '';
  const body = type.includes('json') ? await res.json() : null;
  if (res.ok) return body as T;
  if (res.status === 401 && path !== '/session' && session) {
    session = null;
    onSignedOut();
  }
  const error = body?.error;
  throw new ApiError(res.status, error?.code ?? 'http_error', error?.message ?? `the appliance answered ${res.status} ${res.statusText}`);
}

function headers(method: string, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json', ...extra };
  if (method !== 'GET' && session) h['x-csrf-token'] = session.csrf_token;
  return h;
}

async function request<T>(method: string, path: string, body?: BodyInit, extra?: Record<string, string>): Promise<T> {
  let res: Response;
  try {
    // a read is revalidated each time (an unchanged list answers 304 to its ETag); nothing else is stored
    res = await fetch(path, { method, headers: headers(method, extra), body, credentials: 'same-origin', cache: method === 'GET' ? 'no-cache' : 'no-store' });
  } catch {
    throw new ApiError(0, 'network', 'The appliance cannot be reached. Check the network; the page tries again by itself.');
  }
  return parse<T>(res, path);
}

export const apiGet = <T>(path: string) => request<T>('GET', path);
export const apiDelete = <T>(path: string) => request<T>('DELETE', path);
export const apiPutJson = <T>(path: string, body: unknown) => request<T>('PUT', path, JSON.stringify(body), { 'content-type': 'application/json' });
export const apiPost = <T>(path: string, body?: FormData) => request<T>('POST', path, body);
export const apiPostJson = <T>(path: string, body: unknown) => request<T>('POST', path, JSON.stringify(body), { 'content-type': 'application/json' });

/** The session of this browser, if signed in (after a reload too: the cookie stays). */
export async function loadSession(): Promise<Session | null> {
  session = (await apiGet<{ session: Session | null }>('/session')).session;
  return session;
}

export async function signIn(user: string, password: string): Promise<Session> {
  const answer = await request<{ session: Session }>('POST', '/session', JSON.stringify({ user, password }), { 'content-type': 'application/json' });
  session = answer.session;
  return session;
}

export async function signOut(): Promise<void> {
  try {
    await apiDelete('/session');
  } finally {
    session = null;
  }
}

/**
 * A multipart upload with progress (fetch cannot report an upload's progress). Resolves with the
 * API's answer; rejects with an ApiError carrying the API's message.
 */
export function upload<T>(method: 'POST' | 'PUT', path: string, form: FormData, progress: (sent: number, total: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    for (const [k, v] of Object.entries(headers(method))) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => progress(e.loaded, e.lengthComputable ? e.total : 0);
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The upload was cut off: the appliance cannot be reached.'));
    xhr.onload = () => {
      const res = new Response(xhr.status === 204 ? null : xhr.responseText, {
        status: xhr.status,
        headers: { 'content-type': xhr.getResponseHeader('content-type') ?? '' },
      });
      parse<T>(res, path).then(resolve, reject);
    };
    xhr.send(form);
  });
}
