// A client of several service nodes as one service, as the API asks clients to behave: uploads
// go round-robin over the nodes, and one answered 503 `busy` is sent again (to the next node)
// once its Retry-After has passed; reads of its tasks go to any node. Every answer that is neither
// a success nor a 503 `busy` is noted, as is every network error.
import { api, type ServiceProcess } from '../../testkit/service.js';
import { sleep } from './until.js';

export type AnalyticPath = 'kamcheck' | 'face_log';

export interface AcceptedJob {
  id: string;
  analytic: AnalyticPath;
  /** The node that accepted the upload. */
  node: string;
}

/** One node: its current process (a restarted node listens on another port). */
export class ClusterNode {
  /** false while the node is being killed or is down: the client sends it nothing. */
  accepting = true;
  /** Requests to it not yet answered. */
  readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    readonly id: string,
    public proc: ServiceProcess,
  ) {}

  get url(): string {
    return this.proc.url;
  }
}


export class ClusterClient {
  readonly accepted: AcceptedJob[] = [];
  /** Answers other than 200 and 503 busy, and network errors: what went wrong, where. */
  readonly unexpected: string[] = [];
  /** When uploads were answered 503 busy (each was sent again). */
  readonly busyUploadsAt: number[] = [];
  /** When reads were answered 503 busy. */
  readonly busyReadsAt: number[] = [];
  private turn = 0;

  constructor(private readonly nodes: ClusterNode[]) {}

  /** Uploads until accepted (or answered with something else than 503 busy); `to` takes the first try. */
  async submit(analytic: AnalyticPath, body: () => FormData, to?: ClusterNode): Promise<void> {
    for (let node = to ?? this.next(); ; node = this.next()) {
      let res;
      try {
        res = await this.send(node, api(`${node.url}/${analytic}`, { method: 'POST', body: body() }));
      } catch (err) {
        this.unexpected.push(`POST /${analytic} to ${node.id}: ${(err as Error).message}`);
        return;
      }
      if (res.status === 200) {
        this.accepted.push({ id: res.body.task.job_id, analytic, node: node.id });
        return;
      }
      const retryAfter = Number(res.headers.get('retry-after'));
      if (res.status !== 503 || res.body?.error?.code !== 'busy' || !(retryAfter > 0)) {
        this.unexpected.push(`POST /${analytic} to ${node.id}: ${res.status} ${JSON.stringify(res.body)}`);
        return;
      }
      this.busyUploadsAt.push(Date.now());
      await sleep(retryAfter * 1000);
    }
  }

  /** Reads one of its tasks, picked at random, every `everyMs` until the returned function is called. */
  poll(everyMs: number): () => Promise<void> {
    let polling = true;
    const loop = (async () => {
      while (polling) {
        const job = this.accepted[Math.floor(Math.random() * this.accepted.length)];
        if (job) await this.read(job);
        await sleep(everyMs);
      }
    })();
    return () => {
      polling = false;
      return loop;
    };
  }

  /** Sends the node nothing more; resolves once its requests in flight are answered. */
  async leave(node: ClusterNode): Promise<void> {
    node.accepting = false;
    await Promise.allSettled([...node.inFlight]);
  }

  private async read(job: AcceptedJob): Promise<void> {
    const node = this.next();
    const what = `GET /${job.analytic}/${job.id} on ${node.id}`;
    try {
      const res = await this.send(node, api(`${node.url}/${job.analytic}/${job.id}`));
      if (res.status === 503 && res.body?.error?.code === 'busy') this.busyReadsAt.push(Date.now());
      else if (res.status !== 200) this.unexpected.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    } catch (err) {
      this.unexpected.push(`${what}: ${(err as Error).message}`);
    }
  }

  private next(): ClusterNode {
    const live = this.nodes.filter((n) => n.accepting);
    return live[this.turn++ % live.length];
  }

  private send<T>(node: ClusterNode, request: Promise<T>): Promise<T> {
    node.inFlight.add(request);
    void request.finally(() => node.inFlight.delete(request)).catch(() => {});
    return request;
  }
}
