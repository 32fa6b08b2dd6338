// Events on a real MQTT broker (Debian's mosquitto, started here on a free port) seen by a real
// MQTT client: the retained availability and camera states a newcomer gets on connecting, the
// events in the order they happened, what was raised while the broker was down delivered in order
// once it is back (and the states retained again), the last will when the appliance is killed,
// and on PostgreSQL with two nodes each event once.
import { expect } from 'chai';
import mqtt, { type MqttClient } from 'mqtt';
import { api, form, PASSWORD, removeTempDir, spawnService, startTestService, tempDataDir, USER, type ServiceProcess, type TestService } from '../testkit/service.js';
import { testMedia, type TestMedia } from '../testkit/media.js';
import { startBroker, type PrivateBroker } from '../testkit/mosquitto.js';
import { describeBackends, newDatabaseUrl } from './helpers/backends.js';
import { until } from './helpers/until.js';

const PREFIX = 'site1';

/** A subscriber that records every message of the prefix, retained ones marked. */
class Listener {
  readonly messages: { topic: string; text: string; retained: boolean }[] = [];
  private constructor(readonly client: MqttClient) {}

  static async connect(url: string): Promise<Listener> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 300, clean: true });
    const listener = new Listener(client);
    client.on('message', (topic, payload, packet) => listener.messages.push({ topic, text: payload.toString(), retained: packet.retain }));
    // a reconnection after a broker restart subscribes again (a clean session forgets it)
    client.on('connect', () => void client.subscribe(`${PREFIX}/#`, { qos: 1 }));
    await client.subscribeAsync(`${PREFIX}/#`, { qos: 1 });
    return listener;
  }

  events(): Record<string, any>[] {
    return this.messages.filter((m) => m.topic === `${PREFIX}/events`).map((m) => JSON.parse(m.text));
  }

  last(topic: string): string | undefined {
    return this.messages.filter((m) => m.topic === `${PREFIX}/${topic}`).at(-1)?.text;
  }

  close(): Promise<void> {
    return this.client.endAsync();
  }
}

describeBackends('MQTT output', function (backend) {
  this.timeout(120_000);
  let media: TestMedia;
  let broker: PrivateBroker;
  let svc: TestService;
  const listeners: Listener[] = [];
  const listen = async () => {
    const l = await Listener.connect(broker.url);
    listeners.push(l);
    return l;
  };

  before(() => {
    media = testMedia();
  });
  beforeEach(async () => {
    broker = await startBroker();
    svc = await startTestService({ ...(await backend.env()), KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '1', CLEAR_AFTER: '1', MQTT_URL: broker.url, MQTT_TOPIC_PREFIX: PREFIX, WEBHOOK_BACKOFF_MS: '60000' });
  });
  afterEach(async () => {
    for (const l of listeners.splice(0)) await l.close();
    await svc.stop();
    await broker.close();
  });

  const check = async (camera: string, video: string) => {
    const res = await api(`${svc.url}/kamcheck`, { method: 'POST', body: form({ video }, { camera }) });
    expect(res.body.task?.success, JSON.stringify(res.body)).to.equal(true);
    return res.body.task;
  };

  it('a newcomer sees the appliance online and every camera retained; events come in the order they happened', async () => {
    for (const id of ['gate', 'yard']) await api(`${svc.url}/cameras/${id}/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    const early = await listen();
    const first = await check('gate', media.clipCovered); // done, then gate ok -> tampered
    await api(`${svc.url}/cameras/gate/acknowledge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ comment: 'seen' }) });
    const second = await check('gate', media.clip); // done, then tampered -> ok
    await until('five events', () => early.events().length >= 5, 20_000);
    expect(early.events().map((e) => `${e.type}:${e.task?.job_id ?? e.job_id ?? ''}`)).to.deep.equal([
      `job.completed:${first.job_id}`,
      `camera.state_changed:${first.job_id}`,
      'camera.acknowledged:',
      `job.completed:${second.job_id}`,
      `camera.state_changed:${second.job_id}`,
    ]);
    const changed = early.events()[1];
    expect(changed).to.include({ previous_state: 'ok', state: 'tampered' });
    expect(changed.event_id).to.be.a('string');

    // A newcomer: online, and every camera's current state, retained (yard's, which had no event
    // since the connection, from the periodic duty).
    await svc.service.duties.run('mqtt.states');
    const newcomer = await listen();
    await until('retained states', () => newcomer.messages.filter((m) => m.retained).length >= 3, 10_000);
    expect(newcomer.last('available')).to.equal('online');
    expect(JSON.parse(newcomer.last('cameras/gate/state')!)).to.deep.include({ camera: 'gate', state: 'ok', last_check: { job_id: second.job_id, probability: second.probability, finish_time: second.finish_time } });
    expect(JSON.parse(newcomer.last('cameras/yard/state')!)).to.include({ camera: 'yard', state: 'ok' });
    expect(newcomer.events()).to.deep.equal([]); // events are not retained

    const metrics = (await api(`${svc.url}/metrics`)).body as string;
    expect(metrics).to.include('vaa_mqtt_connected 1').and.include('vaa_mqtt_pending 0');

    // a deleted camera's retained state is cleared: a later newcomer does not see it
    expect((await api(`${svc.url}/cameras/yard`, { method: 'DELETE' })).status).to.equal(200);
    await svc.service.duties.run('mqtt.states');
    await until('the state cleared', () => newcomer.last('cameras/yard/state') === '', 10_000);
    const later = await listen();
    await until('the retained states', () => later.last('cameras/gate/state') !== undefined, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(later.last('cameras/yard/state')).to.equal(undefined);
  });

  it('events raised while the broker is down are published in order once it is back, and the states retained again', async () => {
    await api(`${svc.url}/cameras/dock/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
    await until('connected', async () => ((await api(`${svc.url}/metrics`)).body as string).includes('vaa_mqtt_connected 1'), 10_000);
    await broker.stop();
    await until('the loss seen', async () => ((await api(`${svc.url}/metrics`)).body as string).includes('vaa_mqtt_connected 0'), 10_000);
    const a = await check('dock', media.clipCovered);
    const b = await check('dock', media.clip);
    await until('four events waiting', async () => ((await api(`${svc.url}/metrics`)).body as string).includes('vaa_mqtt_pending 4'), 10_000);
    // the broker away is reported, and does not make the appliance unhealthy
    const health = await api(`${svc.url}/healthz`);
    expect(health.status).to.equal(200);
    expect(health.body.health.mqtt).to.deep.equal({ connected: false, pending: 4 });

    await broker.start(); // without persistence: it comes back empty, retained messages too
    const listener = await listen();
    await until('the waiting events', () => listener.events().length >= 4, 30_000);
    expect(listener.events().map((e) => `${e.type}:${e.task?.job_id ?? e.job_id}`)).to.deep.equal([
      `job.completed:${a.job_id}`,
      `camera.state_changed:${a.job_id}`,
      `job.completed:${b.job_id}`,
      `camera.state_changed:${b.job_id}`,
    ]);
    const newcomer = await listen();
    await until('the states retained again', () => newcomer.last('cameras/dock/state') !== undefined && newcomer.last('available') !== undefined, 10_000);
    expect(JSON.parse(newcomer.last('cameras/dock/state')!)).to.include({ state: 'ok' });
    expect(newcomer.last('available')).to.equal('online');
  });
});

describe('MQTT output of separate processes', function () {
  this.timeout(180_000);
  let media: TestMedia;
  let broker: PrivateBroker;
  let dataDir: string;
  const procs: ServiceProcess[] = [];

  before(async () => {
    media = testMedia();
    broker = await startBroker();
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
    if (dataDir) removeTempDir(dataDir);
  });
  after(async () => {
    await broker?.close();
  });

  const env = (extra: Record<string, string>) => ({ DATA_DIR: dataDir, AUTH_CREDENTIALS: `${USER}:${PASSWORD}`, WORKERS: '1', KAMCHECK_WAIT_MS: '30000', ALARM_AFTER: '1', CLEAR_AFTER: '1', MQTT_URL: broker.url, MQTT_TOPIC_PREFIX: PREFIX, ...extra });

  it('says offline by its last will when the appliance is killed with SIGKILL', async () => {
    dataDir = tempDataDir();
    const listener = await Listener.connect(broker.url);
    try {
      const node = await spawnService(env({}));
      procs.push(node);
      await until('online', () => listener.last('available') === 'online', 10_000);
      node.child.kill('SIGKILL');
      await until('the last will', () => listener.last('available') === 'offline', 10_000);
    } finally {
      await listener.close();
    }
  });

  it('two nodes on PostgreSQL publish each event once', async () => {
    dataDir = tempDataDir();
    const databaseUrl = await newDatabaseUrl();
    for (const id of ['node-a', 'node-b']) procs.push(await spawnService(env({ DATABASE_URL: databaseUrl, NODE_ID: id })));
    const listener = await Listener.connect(broker.url);
    try {
      const [a, b] = procs.map((p) => p.url);
      await api(`${a}/cameras/north/reference`, { method: 'PUT', body: form({ image: media.referenceNear }) });
      const jobs: string[] = [];
      for (const [url, clip] of [[a, media.clipCovered], [b, media.clip], [b, media.clipCovered], [a, media.clip]] as const) {
        const res = await api(`${url}/kamcheck`, { method: 'POST', body: form({ video: clip }, { camera: 'north' }) });
        jobs.push(res.body.task.job_id);
      }
      // 4 checks: 4 job.completed and 4 changes of state
      await until('eight events', () => listener.events().length >= 8, 30_000);
      await new Promise((r) => setTimeout(r, 2000)); // a second publisher would show by now
      const events = listener.events();
      expect(events).to.have.length(8);
      expect(new Set(events.map((e) => e.event_id)).size).to.equal(8);
      expect(events.filter((e) => e.type === 'job.completed').map((e) => e.task.job_id)).to.deep.equal(jobs);
      // while one node stops, the other keeps the appliance online
      procs[1].child.kill('SIGTERM');
      await procs[1].exited;
      await new Promise((r) => setTimeout(r, 1000));
      expect(listener.last('available')).to.equal('online');
    } finally {
      await listener.close();
    }
  });
});
