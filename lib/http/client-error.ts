// Requests that are not valid HTTP (a NUL byte or a bare CR in a header, a header block over
// Node's limit, a broken request line) never reach Koa: Node's parser rejects them. Answer them
// with the SPEC's error envelope instead of Node's bare "400 Bad Request", then close.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { SERVER_HEADER } from '../version.js';
import { errorBody } from './errors.js';

export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // As Node's own handler: answer only on a socket nothing was written to yet (else a response
  // may be half sent on it, and another would corrupt the stream).
  if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { bytesWritten?: number }).bytesWritten) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'the request headers are larger than the server accepts']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request was not received in time']
        : [400, 'bad_request', 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify(errorBody(code, message));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      `Server: ${SERVER_HEADER}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
