// The bad-input corpus: requests a misbehaving script (or an attacker) might send, each as the
// raw bytes that go on the wire and the answer the SPEC requires: its error envelope with a 4xx
// status and a stable code. Nothing here may create a job, crash the service or write outside
// DATA_DIR. `accepted` cases are valid uploads with hostile file names: taken, stored safely.
import fs from 'node:fs';
import type { BadMedia, SourceMedia } from './bad-media.js';
import { multipartBody, multipartType, type Part } from './multipart.js';

export type CaseGroup = 'kamcheck' | 'face_log' | 'auth' | 'paths' | 'http';

export interface HostileCase {
  name: string;
  /** `face_log` cases need the face-log routes. */
  group: CaseGroup;
  /** The whole request as sent (it says `Connection: close`). */
  request: Buffer;
  /** The answer: a 4xx with this code; or, for valid uploads with hostile names, 200. */
  expect: { status: number; code: string } | 'accepted';
}

export interface CorpusOptions {
  /** `Basic ...` header value of valid credentials. */
  auth: string;
  /** The service's MAX_UPLOAD_MB in bytes (the oversize cases go over it). */
  maxUploadBytes: number;
}

/** A file name that would land outside DATA_DIR if it were ever used as a path. */
export const ESCAPE_NAME = 'vaa-hostile-escape';

export function hostileCorpus(src: SourceMedia, bad: BadMedia, o: CorpusOptions): HostileCase[] {
  const clip = fs.readFileSync(src.clip);
  const reference = fs.readFileSync(src.reference);
  const cases: HostileCase[] = [];
  const add = (group: CaseGroup, name: string, request: Buffer, status: number | 'accepted', code = '') =>
    cases.push({ group, name, request, expect: status === 'accepted' ? 'accepted' : { status, code } });

  const upload = (path: string, parts: Part[], extra: [string, string | number][] = [], auth: string | null = o.auth) => {
    const body = multipartBody(parts);
    return request('POST', path, [...(auth ? [['Authorization', auth] as [string, string]] : []), ['Content-Type', multipartType()], ['Content-Length', body.length], ...extra], body);
  };
  const video = (data: Buffer, filename: string | Buffer = 'clip.mp4'): Part => ({ name: 'video', filename, data });
  const image = (data: Buffer, filename: string | Buffer = 'reference.png'): Part => ({ name: 'image', filename, data });
  const field = (name: string, value: string | Buffer): Part => ({ name, data: value });

  // ---- tamper check: bad media, limits, form structure --------------------------------------
  const kamcheck = (name: string, parts: Part[], status: number, code: string) => add('kamcheck', name, upload('/kamcheck', parts), status, code);
  kamcheck('zero-byte video', [video(bad.empty), image(reference)], 415, 'unsupported_media');
  kamcheck('truncated MP4', [video(bad.truncatedMp4), image(reference)], 415, 'unsupported_media');
  kamcheck('random bytes as video', [video(bad.randomBytes), image(reference)], 415, 'unsupported_media');
  kamcheck('text file named .mp4', [video(bad.textAsMp4), image(reference)], 415, 'unsupported_media');
  kamcheck('image sent as the clip', [video(fs.readFileSync(src.jpeg), 'still.mp4'), image(reference)], 415, 'unsupported_media');
  kamcheck('video with no frames', [video(bad.noFrames), image(reference)], 415, 'unsupported_media');
  kamcheck('zero-byte reference', [video(clip), image(bad.empty)], 415, 'unsupported_media');
  kamcheck('random bytes as reference', [video(clip), image(bad.randomBytes)], 415, 'unsupported_media');
  kamcheck('20000x20000 PNG bomb as reference', [video(clip), image(bad.pngBomb, 'bomb.png')], 415, 'unsupported_media');
  kamcheck('20000x20000 PNG bomb as clip', [video(bad.pngBomb, 'bomb.png'), image(reference)], 415, 'unsupported_media');
  kamcheck('clip of 26 frames', [video(fs.readFileSync(src.clip26)), image(reference)], 422, 'too_many_frames');
  kamcheck('reference of another size', [video(clip), image(fs.readFileSync(src.referenceLarge))], 422, 'resolution_mismatch');
  kamcheck('video missing', [image(reference)], 400, 'missing_file');
  kamcheck('image missing', [video(clip)], 400, 'missing_file');
  kamcheck('no parts at all', [], 400, 'missing_file');
  kamcheck('video as a text field', [field('video', 'clip.mp4'), image(reference)], 400, 'missing_file');
  // RFC 7578: a filename makes a part a file, with or without a Content-Type; none makes it a field.
  kamcheck('file part without a Content-Type (random bytes, still a file)', [{ name: 'video', filename: 'clip.mp4', type: null, data: bad.randomBytes }, image(reference)], 415, 'unsupported_media');
  kamcheck('part with a Content-Type but no filename (a field)', [{ name: 'video', type: 'video/mp4', data: clip }, image(reference)], 400, 'missing_file');
  kamcheck('video field name with a NUL byte', [{ name: Buffer.from('vid\0eo'), filename: 'clip.mp4', data: clip }, image(reference)], 400, 'missing_file');
  kamcheck('video sent twice', [video(clip), video(clip, 'again.mp4'), image(reference)], 400, 'invalid_parameter');
  kamcheck('image sent twice', [video(clip), image(reference), image(reference, 'again.png')], 400, 'invalid_parameter');
  kamcheck('eleven files', [video(clip), image(reference), ...Array.from({ length: 9 }, (_, i) => ({ name: `extra${i}`, filename: `x${i}.bin`, data: 'x' }))], 400, 'invalid_parameter');
  kamcheck('file name with ../ (random bytes)', [video(bad.randomBytes, `../../../../../../tmp/${ESCAPE_NAME}-a.mp4`), image(reference)], 415, 'unsupported_media');
  kamcheck('file name with NUL bytes (random bytes)', [video(bad.randomBytes, Buffer.from(`x\0/../${ESCAPE_NAME}-b\0.mp4`)), image(reference)], 415, 'unsupported_media');
  kamcheck('non-UTF-8 file name (random bytes)', [video(bad.randomBytes, Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x2e, 0x6d, 0x70, 0x34])), image(reference)], 415, 'unsupported_media');
  kamcheck('CR LF in a file name (random bytes)', [video(bad.randomBytes, 'a.mp4"\r\nContent-Type: text/html\r\nX-Evil: "1'), image(reference)], 415, 'unsupported_media');

  const body = multipartBody([video(clip), image(reference)]);
  const multipartHeaders = (b: Buffer): [string, string | number][] => [['Authorization', o.auth], ['Content-Type', multipartType()], ['Content-Length', b.length]];
  add('kamcheck', 'JSON instead of multipart', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Type', 'application/json'], ['Content-Length', 2]], Buffer.from('{}')), 400, 'invalid_parameter');
  add('kamcheck', 'no Content-Type', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Length', body.length]], body), 400, 'invalid_parameter');
  add('kamcheck', 'multipart without a boundary', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Type', 'multipart/form-data'], ['Content-Length', body.length]], body), 400, 'invalid_parameter');
  const cut = multipartBody([video(clip), image(reference)], { close: false }).subarray(0, clip.length);
  add('kamcheck', 'multipart cut off before its end', request('POST', '/kamcheck', multipartHeaders(cut), cut), 400, 'invalid_parameter');
  add('kamcheck', 'random bytes as a multipart body', request('POST', '/kamcheck', multipartHeaders(bad.randomBytes), bad.randomBytes), 400, 'invalid_parameter');
  add('kamcheck', 'empty multipart body', request('POST', '/kamcheck', multipartHeaders(Buffer.alloc(0)), Buffer.alloc(0)), 400, 'missing_file');
  add('kamcheck', 'declared length over the upload limit', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Type', multipartType()], ['Content-Length', 5 * 1024 ** 3]], body), 413, 'payload_too_large');
  const big = multipartBody([video(Buffer.alloc(o.maxUploadBytes + 1024 * 1024, 1)), image(reference)]);
  add('kamcheck', 'chunked body over the upload limit', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Type', multipartType()], ['Transfer-Encoding', 'chunked']], chunked(big)), 413, 'payload_too_large');

  // ---- face log: bad media and absurd parameters (need the face-log routes) ------------------
  const faceLog = (name: string, parts: Part[], status: number, code: string) => add('face_log', name, upload('/face_log', parts), status, code);
  faceLog('zero-byte video', [video(bad.empty)], 415, 'unsupported_media');
  faceLog('truncated MP4', [video(bad.truncatedMp4)], 415, 'unsupported_media');
  faceLog('random bytes', [video(bad.randomBytes)], 415, 'unsupported_media');
  faceLog('text file named .mp4', [video(bad.textAsMp4)], 415, 'unsupported_media');
  faceLog('video with no frames', [video(bad.noFrames)], 415, 'unsupported_media');
  faceLog('20000x20000 PNG bomb as video', [video(bad.pngBomb, 'bomb.png')], 415, 'unsupported_media');
  faceLog('20000x20000 PNG bomb as image', [image(bad.pngBomb, 'bomb.png')], 415, 'unsupported_media');
  faceLog('no file', [field('min_size', '40')], 400, 'missing_file');
  faceLog('video as a text field', [field('video', 'clip.mp4')], 400, 'missing_file');
  faceLog('video and image both', [video(clip), image(reference)], 400, 'invalid_parameter');
  faceLog('video sent twice', [video(clip), video(clip, 'again.mp4')], 400, 'invalid_parameter');
  faceLog('min_size=-1', [video(clip), field('min_size', '-1')], 400, 'invalid_parameter');
  faceLog('min_size=29', [video(clip), field('min_size', '29')], 400, 'invalid_parameter');
  faceLog('min_size=abc', [video(clip), field('min_size', 'abc')], 400, 'invalid_parameter');
  faceLog('max_frames=1e99', [video(clip), field('max_frames', '1e99')], 400, 'invalid_parameter');
  faceLog('max_frames=-5', [video(clip), field('max_frames', '-5')], 400, 'invalid_parameter');
  faceLog('max_frames=2.5', [video(clip), field('max_frames', '2.5')], 400, 'invalid_parameter');
  faceLog('max_frames=99999999999999999999', [video(clip), field('max_frames', '9'.repeat(20))], 400, 'invalid_parameter');
  faceLog('gender=maybe', [video(clip), field('gender', 'maybe')], 400, 'invalid_parameter');
  faceLog('track_thumbnails=yes', [video(clip), field('track_thumbnails', 'yes')], 400, 'invalid_parameter');
  faceLog('gender sent twice', [video(clip), field('gender', 'True'), field('gender', 'False')], 400, 'invalid_parameter');
  faceLog('parameter with a NUL byte', [video(clip), field('min_size', Buffer.from('40\0'))], 400, 'invalid_parameter');
  faceLog('file name with ../ (random bytes)', [video(bad.randomBytes, `../../../../../../tmp/${ESCAPE_NAME}-c.mp4`)], 415, 'unsupported_media');
  faceLog('file name with NUL bytes (random bytes)', [video(bad.randomBytes, Buffer.from(`\0../${ESCAPE_NAME}-d.mp4`))], 415, 'unsupported_media');
  faceLog('non-UTF-8 file name (random bytes)', [video(bad.randomBytes, Buffer.from([0xc0, 0xaf, 0xff, 0x2e, 0x6d, 0x70, 0x34]))], 415, 'unsupported_media');
  add('face_log', 'declared length over the upload limit', request('POST', '/face_log', [['Authorization', o.auth], ['Content-Type', multipartType()], ['Content-Length', 5 * 1024 ** 3]], body), 413, 'payload_too_large');

  // ---- authentication ----------------------------------------------------------------------
  const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
  const [user] = Buffer.from(o.auth.replace(/^Basic /, ''), 'base64').toString('utf8').split(':');
  const authCases: [string, string | null][] = [
    ['no Authorization header', null],
    ['empty Authorization header', ''],
    ['Basic without credentials', 'Basic'],
    ['Basic with invalid base64', 'Basic !!!not-base64!!!'],
    ['Basic without a colon', `Basic ${b64('justauser')}`],
    ['Basic with a wrong password', `Basic ${b64(`${user}:wrong`)}`],
    ['Basic with an unknown user', `Basic ${b64('nobody:correct horse battery staple')}`],
    ['Basic with an empty password', `Basic ${b64(`${user}:`)}`],
    ['Basic with non-UTF-8 credentials', `Basic ${b64(Buffer.from([0xff, 0x3a, 0xfe]))}`],
    ['Basic with 8 KiB of credentials', `Basic ${b64(`${user}:${'x'.repeat(6000)}`)}`],
    ['Bearer token', 'Bearer eyJhbGciOiJub25lIn0.e30.'],
    ['Digest', 'Digest username="tester", realm="video-analytics", nonce="x", uri="/kamcheck", response="0"'],
    ['Negotiate', 'Negotiate YIIGhgYJKoZIhvcSAQICAQBuggZ1MIIGcaADAgEF'],
    ['credentials without a scheme', b64(`${user}:correct horse battery staple`)],
  ];
  for (const [name, header] of authCases) {
    add('auth', `GET: ${name}`, request('GET', '/kamcheck', header === null ? [] : [['Authorization', header]]), 401, 'unauthorized');
  }
  add('auth', 'POST without credentials, 5 GiB declared', request('POST', '/kamcheck', [['Content-Type', multipartType()], ['Content-Length', 5 * 1024 ** 3]], body.subarray(0, 1000)), 401, 'unauthorized');
  add('auth', 'POST with a wrong password', upload('/kamcheck', [video(clip), image(reference)], [], `Basic ${b64(`${user}:wrong`)}`), 401, 'unauthorized');
  add('auth', 'Authorization with a NUL byte', request('GET', '/kamcheck', [['Authorization', `Basic ${b64(`${user}:x`)}\0`]]), 400, 'bad_request');
  add('auth', 'Authorization with a bare CR', request('GET', '/kamcheck', [['Authorization', `Basic\r${b64(`${user}:x`)}`]]), 400, 'bad_request');
  add('auth', 'Authorization of 40 KiB', request('GET', '/kamcheck', [['Authorization', `Basic ${'A'.repeat(40 * 1024)}`]]), 431, 'headers_too_large');

  // ---- job ids and paths with path characters -----------------------------------------------
  const path404 = (name: string, target: string) => add('paths', name, request('GET', target, [['Authorization', o.auth]]), 404, 'not_found');
  path404('encoded ../ in a tamper-check job id', '/kamcheck/..%2F..%2Fappliance.sqlite');
  path404('raw ../ in a tamper-check job id', '/kamcheck/../../etc/passwd');
  path404('encoded dot-dot job id', '/kamcheck/%2e%2e');
  path404('NUL byte in a job id', '/kamcheck/%00');
  path404('backslashes in a job id', '/kamcheck/..%5C..%5Cappliance.sqlite');
  path404('broken percent-encoding in a job id', '/kamcheck/%E0%A4%A');
  path404('4000-character job id', `/kamcheck/${'a'.repeat(4000)}`);
  path404('encoded ../ in a face-log job id', '/face_log/..%2F..%2Fcredentials');
  path404('job id with two slashes', '/kamcheck/a/b/c');
  add('paths', 'history page that is not a number', request('GET', '/kamcheck/a/b', [['Authorization', o.auth]]), 400, 'invalid_parameter');
  path404('double slash', '//kamcheck');
  path404('encoded ../ as a result job id', '/results/..%2F..%2Fappliance.sqlite/face_log_2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f.xml');
  path404('encoded ../ as a result file', '/results/2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f/..%2F..%2Fcredentials');
  path404('result of an unknown job', '/results/2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f/face_log_2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f.xml');
  add('paths', 'result link with a forged signature', request('GET', `/results/2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f/face_log_2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f.xml?expires=4102444800&sig=${'0'.repeat(64)}`, []), 401, 'unauthorized');
  add('paths', 'result link with a forged token in its path', request('GET', `/results/2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f/4102444800.${'0'.repeat(64)}/face_log_2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f.xml`, []), 401, 'unauthorized');
  add('paths', 'result link with a malformed signature', request('GET', '/results/2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f/face_log_2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f.mp4?expires=-1&sig=%00', []), 401, 'unauthorized');
  add('paths', 'DELETE a tamper check', request('DELETE', '/kamcheck/2c0f5b3e-8a1d-4c3b-9d7e-0a1b2c3d4e5f', [['Authorization', o.auth]]), 405, 'method_not_allowed');
  add('paths', 'PUT the tamper checks', request('PUT', '/kamcheck', [['Authorization', o.auth], ['Content-Length', 0]]), 405, 'method_not_allowed');

  // ---- not HTTP ----------------------------------------------------------------------------
  add('http', 'garbage instead of a request', Buffer.concat([pseudo(200), Buffer.from('\r\n\r\n')]), 400, 'bad_request');
  add('http', 'unknown HTTP version', Buffer.from(`GET /kamcheck HTTP/9.9\r\nAuthorization: ${o.auth}\r\nConnection: close\r\n\r\n`), 400, 'bad_request');
  add('http', 'unknown method', Buffer.from(`FROB /kamcheck HTTP/1.1\r\nHost: a\r\nAuthorization: ${o.auth}\r\nConnection: close\r\n\r\n`), 400, 'bad_request');
  add('http', 'Content-Length that is not a number', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Type', multipartType()], ['Content-Length', 'lots']], body), 400, 'bad_request');
  add('http', 'Content-Length and Transfer-Encoding both', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Type', multipartType()], ['Content-Length', body.length], ['Transfer-Encoding', 'chunked']], chunked(body)), 400, 'bad_request');
  add('http', 'two different Content-Lengths', request('POST', '/kamcheck', [['Authorization', o.auth], ['Content-Type', multipartType()], ['Content-Length', body.length], ['Content-Length', 5]], body), 400, 'bad_request');

  // ---- valid uploads with hostile file names: accepted, the name never used as a path --------
  const named = (name: string, filename: string | Buffer) => add('kamcheck', name, upload('/kamcheck', [video(clip, filename), image(reference, filename)]), 'accepted');
  named('valid clip named ../../etc/passwd', `../../../../../../tmp/${ESCAPE_NAME}-e`);
  named('valid clip named with NUL bytes', Buffer.from(`a\0b/../../${ESCAPE_NAME}-f\0.mp4`));
  named('valid clip with a non-UTF-8 name', Buffer.from([0xff, 0xfe, 0xfd, 0x2e, 0x6d, 0x70, 0x34]));
  named('valid clip with a 1000-character name', `${'n'.repeat(1000)}.mp4`);
  return cases;
}

/** A request with Host and Connection: close, headers as given (no validation of their bytes). */
function request(method: string, target: string, headers: [string, string | number][], body?: Buffer): Buffer {
  const head = [`${method} ${target} HTTP/1.1`, 'Host: appliance', ...headers.map(([k, v]) => `${k}: ${v}`), 'Connection: close', '', ''].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), body ?? Buffer.alloc(0)]);
}

function chunked(body: Buffer, size = 64 * 1024): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) {
    const piece = body.subarray(at, at + size);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function pseudo(n: number): Buffer {
  return Buffer.from(Array.from({ length: n }, (_, i) => (i * 73 + 41) % 256));
}
