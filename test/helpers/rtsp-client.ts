// A minimal RTSP reader over TCP for tests that must see the protocol itself: which requests a
// server answers and how many RTP bytes follow PLAY (ffmpeg hides both behind its own timeouts).
import net from 'node:net';

export interface RtspReply {
  method: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RtspPlayback {
  /** OPTIONS, DESCRIBE, SETUP and PLAY, in order; the first one not answered 200 ends the list. */
  replies: RtspReply[];
  /** RTP payload bytes (interleaved channel 0) received since PLAY was answered. */
  rtpBytes(): number;
  close(): void;
}

/**
 * Connects to an rtsp:// URL (with user:password@ for Basic credentials), sets up its first stream
 * over TCP and plays it; resolves once PLAY is answered (or a request is refused).
 */
export async function playRtsp(url: string): Promise<RtspPlayback> {
  const target = new URL(url);
  const credentials = target.username ? `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}` : '';
  const base = `rtsp://${target.host}${target.pathname}`;
  const socket = net.connect(Number(target.port), target.hostname);
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });

  let pending = Buffer.alloc(0);
  let rtpBytes = 0;
  let waiting: ((reply: RtspReply) => void) | null = null;
  let waitingMethod = '';
  socket.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      // Interleaved data: '$', channel, 16-bit length, payload.
      if (pending.length > 0 && pending[0] === 0x24) {
        if (pending.length < 4) return;
        const length = pending.readUInt16BE(2);
        if (pending.length < 4 + length) return;
        if (pending[1] === 0) rtpBytes += length;
        pending = pending.subarray(4 + length);
        continue;
      }
      const end = pending.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = pending.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const bodyLength = Number(headers['content-length'] ?? 0);
      if (pending.length < end + 4 + bodyLength) return;
      const body = pending.subarray(end + 4, end + 4 + bodyLength).toString('utf8');
      pending = pending.subarray(end + 4 + bodyLength);
      const status = Number(lines[0].split(' ')[1]);
      // Counted from PLAY's answer on: data may follow it in the same chunk.
      if (waitingMethod === 'PLAY') rtpBytes = 0;
      waiting?.({ method: waitingMethod, status, headers, body });
      waiting = null;
    }
  });

  let cseq = 0;
  const request = (method: string, uri: string, extra: Record<string, string> = {}) =>
    new Promise<RtspReply>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} ${uri}`)), 10_000);
      waitingMethod = method;
      waiting = (reply) => {
        clearTimeout(timer);
        resolve(reply);
      };
      const headers = { CSeq: String(++cseq), ...(credentials ? { Authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } : {}), ...extra };
      socket.write(`${method} ${uri} RTSP/1.0\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
    });

  const replies: RtspReply[] = [];
  const playback: RtspPlayback = { replies, rtpBytes: () => rtpBytes, close: () => socket.destroy() };
  const step = async (method: string, uri: string, extra?: Record<string, string>) => {
    const reply = await request(method, uri, extra);
    replies.push(reply);
    return reply.status === 200 ? reply : null;
  };
  try {
    if (!(await step('OPTIONS', base))) return playback;
    const described = await step('DESCRIBE', base, { Accept: 'application/sdp' });
    if (!described) return playback;
    const control = /a=control:(?!\*)(\S+)/.exec(described.body)?.[1] ?? '';
    const streamUri = control.startsWith('rtsp://') ? control : `${base}/${control}`;
    const setup = await step('SETUP', streamUri, { Transport: 'RTP/AVP/TCP;unicast;interleaved=0-1' });
    if (!setup) return playback;
    const session = setup.headers['session'].split(';')[0];
    await step('PLAY', base, { Session: session, Range: 'npt=0.000-' });
    return playback;
  } catch (err) {
    socket.destroy();
    throw err;
  }
}
