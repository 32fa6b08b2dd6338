// Prometheus metrics of the service (GET /metrics), on a registry of its own so that several
// services in one process (tests) do not share counters. Gauges are read from their sources at
// scrape time (the job store, the queue, the worker pool, the disk), so they are never stale;
// durations are observed as they happen.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { procStatus } from './proc-stats.js';
import type { DutyOutcome } from './duty-runner.js';

export type JobOutcome = 'done' | 'failed' | 'retried';

/** Where the scrape-time gauges come from. */
export interface MetricsSources {
  /** Analytics the service runs: their job gauges are reported even at 0. */
  analytics: string[];
  /** This node's name (NODE_ID): a label of vaa_node_info. */
  nodeId: string;
  jobCounts(): Promise<{ analytic: string; state: string; count: number }[]>;
  /** Jobs queued or running on every node sharing the store. */
  queueDepth(): Promise<number>;
  /** Jobs running on this node. */
  runningHere(): number;
  queueLimit: number;
  workersAlive(): number;
  workerRestarts(): number;
  /** Well workers replaced since start, by why (memory_limit, memory_after_job, max_jobs). */
  workerRetirements(): Record<string, number>;
  workerPids(): number[];
  freeDiskBytes(): Promise<number>;
  /** Webhook events neither delivered nor given up, on every node sharing the store. */
  webhooksPending(): Promise<number>;
  /** Cameras on record by alarm state, on every node sharing the database. */
  cameraStates(): Promise<{ state: string; count: number }[]>;
  /** With MQTT_URL: whether this node's broker connection is up, and the events waiting for the broker. */
  mqtt?: { connected(): boolean; pending(): Promise<number> } | null;
  /** With MILESTONE_EVENT_URL: the analytics events waiting for XProtect. */
  milestone?: { pending(): Promise<number> } | null;
  /** The periodic duties' names: their counters are reported even at 0. */
  duties: string[];
}

export type WebhookDeliveryOutcome = 'delivered' | 'failed' | 'gave_up';

const JOB_STATES = ['queued', 'processing', 'done', 'failed'];
/** 50 ms (a small tamper check) to 2 h (a long face log). */
const JOB_SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200];
/** 5 ms (a receiver on the LAN) to the longest time limit of an attempt (WEBHOOK_TIMEOUT_MS). */
const WEBHOOK_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];
const WEBHOOK_OUTCOMES: WebhookDeliveryOutcome[] = ['delivered', 'failed', 'gave_up'];
const WEBHOOK_EVENT_TYPES = ['job.completed', 'camera.state_changed'];
/** 0.1 s (a free worker) to 10 minutes (two intervals of 5 minutes behind). */
const CHECK_LATENESS_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** 1 ms (nothing to do) to 10 minutes (a first record sweep of a large store). */
const DUTY_SECONDS_BUCKETS = [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600];
/** 1 ms (a GET) to a minute (a large upload). */
const HTTP_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly jobSeconds: Histogram<'analytic' | 'outcome'>;
  private readonly httpSeconds: Histogram<'method' | 'route' | 'status'>;
  private readonly webhookDeliveries: Counter<'event_type' | 'outcome'>;
  private readonly outputDeliveries: Counter<'output' | 'outcome'>;
  private readonly milestoneAnswers: Counter<'status'>;
  private readonly signIns: Counter<'method' | 'outcome'>;
  private readonly passwordHashes: Counter;
  private readonly webhookSeconds: Histogram<'event_type' | 'outcome'>;
  private readonly checkLateness: Histogram;
  private readonly checkWait: Histogram;
  private readonly checksSkipped: Counter<'reason'>;
  private readonly dutyRuns: Counter<'duty'>;
  private readonly dutyFailures: Counter<'duty'>;
  private readonly dutySeconds: Histogram<'duty'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    new Gauge({
      name: 'vaa_jobs',
      help: 'Jobs by analytic and state: queued and processing now, done and failed since the store began (record retention does not lower them)',
      labelNames: ['analytic', 'state'],
      registers,
      async collect() {
        // While the database does not answer, a scrape still succeeds with the last values.
        const counts = await sources.jobCounts().catch(() => null);
        if (!counts) return;
        this.reset();
        for (const analytic of sources.analytics) for (const state of JOB_STATES) this.set({ analytic, state }, 0);
        for (const c of counts) this.set({ analytic: c.analytic, state: c.state }, c.count);
      },
    });
    this.jobSeconds = new Histogram({
      name: 'vaa_job_processing_seconds',
      help: 'Time a worker spent on one run of a job, by analytic and outcome (retried: its worker crashed)',
      labelNames: ['analytic', 'outcome'],
      buckets: JOB_SECONDS_BUCKETS,
      registers,
    });
    storeGauge(registers, 'vaa_queue_depth', 'Jobs waiting or running in the queue, on every node sharing the database', () => sources.queueDepth());
    new Gauge({
      name: 'vaa_jobs_running',
      help: 'Jobs running on this node',
      registers,
      collect() {
        this.set(sources.runningHere());
      },
    });
    new Gauge({
      name: 'vaa_node_info',
      help: 'This node: its NODE_ID (always 1)',
      labelNames: ['node_id'],
      registers,
      collect() {
        this.set({ node_id: sources.nodeId }, 1);
      },
    });
    new Gauge({
      name: 'vaa_queue_limit',
      help: 'Queue depth at which uploads are refused with 503 (QUEUE_LIMIT)',
      registers,
      collect() {
        this.set(sources.queueLimit);
      },
    });
    new Gauge({
      name: 'vaa_workers_alive',
      help: 'Analytics worker processes running',
      registers,
      collect() {
        this.set(sources.workersAlive());
      },
    });
    let restartsSeen = 0;
    new Counter({
      name: 'vaa_worker_restarts_total',
      help: 'Worker processes replaced after a crash or a job timeout',
      registers,
      collect() {
        const now = sources.workerRestarts();
        if (now > restartsSeen) this.inc(now - restartsSeen);
        restartsSeen = now;
      },
    });
    const retiredSeen: Record<string, number> = {};
    new Counter({
      name: 'vaa_worker_replacements_total',
      help: 'Well worker processes replaced by why: memory_limit (past WORKER_MEMORY_MB during a job), memory_after_job (past WORKER_IDLE_MEMORY_MB after one), max_jobs (WORKER_MAX_JOBS)',
      labelNames: ['reason'],
      registers,
      collect() {
        for (const [reason, now] of Object.entries(sources.workerRetirements())) {
          this.inc({ reason }, now - (retiredSeen[reason] ?? 0));
          retiredSeen[reason] = now;
        }
      },
    });
    new Gauge({
      name: 'vaa_worker_max_resident_memory_bytes',
      help: 'Largest resident memory among the running worker processes (Linux /proc)',
      registers,
      collect() {
        this.set(Math.max(0, ...sources.workerPids().map(residentBytes)));
      },
    });
    new Gauge({
      name: 'vaa_data_dir_free_bytes',
      help: 'Free disk space in DATA_DIR',
      registers,
      async collect() {
        this.set(await sources.freeDiskBytes());
      },
    });
    this.httpSeconds = new Histogram({
      name: 'vaa_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status, until the response was sent',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_SECONDS_BUCKETS,
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'vaa_webhook_deliveries_total',
      help: 'Webhook delivery attempts of this node by event type and outcome: delivered (2xx), failed (tried again later), gave_up (failed, and the retry window is over)',
      labelNames: ['event_type', 'outcome'],
      registers,
    });
    for (const event_type of WEBHOOK_EVENT_TYPES) for (const outcome of WEBHOOK_OUTCOMES) this.webhookDeliveries.inc({ event_type, outcome }, 0);
    this.outputDeliveries = new Counter({
      name: 'vaa_event_output_deliveries_total',
      help: 'Deliveries of events to the MQTT broker (publications) and to XProtect (analytics events) by this node, by outcome as for webhooks',
      labelNames: ['output', 'outcome'],
      registers,
    });
    this.milestoneAnswers = new Counter({
      name: 'vaa_milestone_answers_total',
      help: "XProtect event server's answers to analytics events by HTTP status (none: no answer, a refused connection or a time-out)",
      labelNames: ['status'],
      registers,
    });
    this.signIns = new Counter({
      name: 'vaa_sign_ins_total',
      help: 'Sign-ins checked by this node, by method (basic, console, key) and outcome: ok, wrong (credentials refused), throttled (refused with 429 before any check)',
      labelNames: ['method', 'outcome'],
      registers,
    });
    for (const method of ['basic', 'console', 'key']) for (const outcome of ['ok', 'wrong', 'throttled']) this.signIns.inc({ method, outcome }, 0);
    this.passwordHashes = new Counter({
      name: 'vaa_password_hashes_total',
      help: 'Passwords hashed by this node to check a sign-in (scrypt; a credential checked in the last minutes is not hashed again)',
      registers,
    });
    this.webhookSeconds = new Histogram({
      name: 'vaa_webhook_delivery_duration_seconds',
      help: 'Time of one webhook delivery attempt until the receiver answered (or the attempt failed), by event type and outcome',
      labelNames: ['event_type', 'outcome'],
      buckets: WEBHOOK_SECONDS_BUCKETS,
      registers,
    });
    storeGauge(registers, 'vaa_webhook_outbox_pending', 'Events waiting for delivery (neither delivered nor given up) to every receiver, on every node sharing the database', () => sources.webhooksPending());
    if (sources.mqtt) {
      const mqtt = sources.mqtt;
      new Gauge({
        name: 'vaa_mqtt_connected',
        help: "1 while this node's connection to the MQTT broker (MQTT_URL) is up",
        registers,
        collect() {
          this.set(mqtt.connected() ? 1 : 0);
        },
      });
      storeGauge(registers, 'vaa_mqtt_pending', 'Events waiting to be published on the MQTT broker, on every node sharing the database', () => mqtt.pending());
    }
    if (sources.milestone) {
      const milestone = sources.milestone;
      storeGauge(registers, 'vaa_milestone_pending', "Analytics events waiting for XProtect's event server (MILESTONE_EVENT_URL), on every node sharing the database", () => milestone.pending());
    }
    new Gauge({
      name: 'vaa_cameras',
      help: 'Cameras on record by state (ok, tampered, offline)',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await sources.cameraStates().catch(() => null);
        if (!counts) return;
        this.reset();
        for (const state of ['ok', 'tampered', 'offline']) this.set({ state }, 0);
        for (const c of counts) this.set({ state: c.state }, c.count);
      },
    });
    this.checkLateness = new Histogram({
      name: 'vaa_camera_check_lateness_seconds',
      help: "How long after its due time the capture of a camera's stream started (recorded with the check's outcome)",
      buckets: CHECK_LATENESS_BUCKETS,
      registers,
    });
    this.checkWait = new Histogram({
      name: 'vaa_camera_check_wait_seconds',
      help: "From the start of a camera stream's capture to the start of its analysis on a worker: the capture, then the wait for a worker",
      buckets: CHECK_LATENESS_BUCKETS,
      registers,
    });
    this.checksSkipped = new Counter({
      name: 'vaa_camera_checks_skipped_total',
      help: "Scheduled checks of camera streams not queued: the camera's previous check was still unfinished (busy), or the queue was full (queue_full)",
      labelNames: ['reason'],
      registers,
    });
    for (const reason of ['busy', 'queue_full']) this.checksSkipped.inc({ reason }, 0);
    this.dutyRuns = new Counter({
      name: 'vaa_duty_runs_total',
      help: 'Runs of a periodic duty on this node (retention, expired sessions, the outbox), failed ones included; a turn another node took is not counted',
      labelNames: ['duty'],
      registers,
    });
    this.dutyFailures = new Counter({
      name: 'vaa_duty_failures_total',
      help: 'Runs of a periodic duty on this node that failed (the log says why)',
      labelNames: ['duty'],
      registers,
    });
    this.dutySeconds = new Histogram({
      name: 'vaa_duty_duration_seconds',
      help: 'Time one run of a periodic duty took on this node',
      labelNames: ['duty'],
      buckets: DUTY_SECONDS_BUCKETS,
      registers,
    });
    for (const duty of sources.duties) {
      this.dutyRuns.inc({ duty }, 0);
      this.dutyFailures.inc({ duty }, 0);
    }
  }

  observeDuty(duty: string, outcome: DutyOutcome, seconds: number): void {
    this.dutyRuns.inc({ duty });
    if (outcome === 'failed') this.dutyFailures.inc({ duty });
    this.dutySeconds.observe({ duty }, seconds);
  }

  observeWebhookDelivery(eventType: string, outcome: WebhookDeliveryOutcome, seconds: number): void {
    this.webhookDeliveries.inc({ event_type: eventType, outcome });
    this.webhookSeconds.observe({ event_type: eventType, outcome }, seconds);
  }

  observeOutputDelivery(output: 'mqtt' | 'milestone', outcome: WebhookDeliveryOutcome): void {
    this.outputDeliveries.inc({ output, outcome });
  }

  countSignIn(method: 'basic' | 'console' | 'key', outcome: 'ok' | 'wrong' | 'throttled'): void {
    this.signIns.inc({ method, outcome });
  }

  countPasswordHash(): void {
    this.passwordHashes.inc();
  }

  observeMilestoneAnswer(status: number | null): void {
    this.milestoneAnswers.inc({ status: status === null ? 'none' : String(status) });
  }

  observeStreamCheck(latenessS: number, waitS: number | null): void {
    this.checkLateness.observe(latenessS);
    if (waitS !== null) this.checkWait.observe(waitS);
  }

  countSkippedCheck(reason: 'busy' | 'queue_full'): void {
    this.checksSkipped.inc({ reason });
  }

  observeJob(analytic: string, outcome: JobOutcome, seconds: number): void {
    this.jobSeconds.observe({ analytic, outcome }, seconds);
  }

  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.httpSeconds.observe({ method, route, status: String(status) }, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/** A gauge read from the database at each scrape; while the database does not answer, it keeps its last value. */
function storeGauge(registers: Registry[], name: string, help: string, read: () => Promise<number>): void {
  new Gauge({
    name,
    help,
    registers,
    async collect() {
      const value = await read().catch(() => null);
      if (value !== null) this.set(value);
    },
  });
}

/** VmRSS of a process in bytes; 0 when it is gone or /proc is not there. */
export function residentBytes(pid: number): number {
  return procStatus(pid, 'VmRSS');
}
