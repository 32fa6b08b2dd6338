// The console's pages live in the URL's fragment (`/#/cameras/gate-1`): the appliance serves one
// page at `/`, and no page path can collide with an API path.
import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'cameras' }
  | { page: 'camera'; camera: string }
  | { page: 'jobs'; kind: 'kamcheck' | 'face_log'; number: number }
  | { page: 'kamcheck'; jobId: string }
  | { page: 'face_log'; analytic: string; jobId: string }
  | { page: 'upload'; kind: 'kamcheck' | 'face_log' }
  | { page: 'users' }
  | { page: 'keys' }
  | { page: 'audit' }
  | { page: 'not_found'; hash: string };

const FACE_ANALYTICS = ['face_log', 'face_log_image', 'face_detect', 'face_detect_image'];

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [first, second, third] = parts;
  if (!first || (first === 'cameras' && !second)) return { page: 'cameras' };
  if (first === 'cameras' && second) return { page: 'camera', camera: second };
  if (first === 'jobs') {
    const kind = second === 'face_log' ? 'face_log' : 'kamcheck';
    const number = Math.max(1, Math.floor(Number(third ?? 1)) || 1);
    return { page: 'jobs', kind, number };
  }
  if (first === 'kamcheck' && second) return { page: 'kamcheck', jobId: second };
  if (FACE_ANALYTICS.includes(first) && second) return { page: 'face_log', analytic: first, jobId: second };
  if (first === 'upload') return { page: 'upload', kind: second === 'face_log' ? 'face_log' : 'kamcheck' };
  if ((first === 'users' || first === 'keys' || first === 'audit') && !second) return { page: first };
  return { page: 'not_found', hash };
}

export const href = {
  cameras: () => '#/cameras',
  camera: (id: string) => `#/cameras/${encodeURIComponent(id)}`,
  jobs: (kind: 'kamcheck' | 'face_log', number = 1) => `#/jobs/${kind}/${number}`,
  kamcheck: (jobId: string) => `#/kamcheck/${jobId}`,
  faceLog: (analytic: string, jobId: string) => `#/${analytic}/${jobId}`,
  upload: (kind: 'kamcheck' | 'face_log') => `#/upload/${kind}`,
  users: () => '#/users',
  keys: () => '#/keys',
  audit: () => '#/audit',
};

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseRoute(hash);
}
