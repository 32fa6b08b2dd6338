// A real HTTP receiver of webhooks for the tests: records every request it gets (headers, body,
// time) and answers each as its script says: a status, a redirect, or no answer at all.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When its body had arrived, ms. */
  at: number;
}

/** A status, a status with headers, or 'hang': the request is never answered. */
export type Reply = number | { status: number; headers?: Record<string, string> } | 'hang';

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** `reply` is asked for each request in turn (0 = the first) once its body arrived. */
  static async start(reply: (n: number, req: ReceivedRequest) => Reply = () => 200): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const got: ReceivedRequest = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        const n = receiver!.requests.push(got) - 1;
        const answer = reply(n, got);
        if (answer === 'hang') return;
        const { status, headers = {} } = typeof answer === 'number' ? { status: answer } : answer;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(`answer ${status}\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}/hook`);
    return receiver;
  }

  /** The requests' X-Event-Id headers, in order. */
  get eventIds(): string[] {
    return this.requests.map((r) => String(r.headers['x-event-id']));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
