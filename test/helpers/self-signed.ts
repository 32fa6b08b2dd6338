// A self-signed certificate for 127.0.0.1 (EC P-256: quick to make), for the HTTPS tests.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

export function selfSigned(dir: string, name = 'server'): { cert: string; key: string } {
  const cert = path.join(dir, `${name}.crt`);
  const key = path.join(dir, `${name}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert,
    '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], { stdio: 'ignore' });
  return { cert, key };
}
