// The GET side of bench-load.ts, in a process of its own so that the burst's client work does
// not delay these requests and count as service latency. Polls the given paths at a fixed
// overall rate until told 'stop' over IPC, then sends back autocannon's result.
// (autocannon's own `workers` option cannot be stopped early, hence a process.)
import autocannon, { type Result } from 'autocannon';

export interface PollerOrder {
  /** Several: the connections are dealt to them in turn. */
  url: string | string[];
  authorization: string;
  connections: number;
  rate: number;
  paths: string[];
}

process.once('message', (order: PollerOrder) => {
  const instance = autocannon({
    url: order.url,
    connections: order.connections,
    // A VMS polls at a rate; GETs as fast as possible would measure the client, not the service.
    overallRate: order.rate,
    duration: 3600,
    timeout: 30,
    headers: { authorization: order.authorization },
    requests: order.paths.map((path) => ({ method: 'GET', path })),
  });
  process.once('message', () => instance.stop());
  void Promise.resolve(instance).then((result: Result) => {
    process.send!(result, () => process.exit(0));
  });
  process.send!('started');
});
