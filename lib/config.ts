// The service's one configuration object, read once at start from the environment.
// Every default lives here; README.md documents the same table.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

export interface Credential {
  user: string;
  password: string;
}

export interface Config {
  /** HTTP port. @defaultValue 8080 (`PORT`) */
  port: number;
  /** Bind address. @defaultValue '0.0.0.0' (`HOST`) */
  host: string;
  /** SQLite database, uploads, results, generated credentials. @defaultValue './data' (`DATA_DIR`) */
  dataDir: string;
  /** Basic credentials; null means "use or generate DATA_DIR/credentials". (`AUTH_CREDENTIALS`) */
  credentials: Credential[] | null;
  /** Base of absolute result links; null means "from the request's Host". (`PUBLIC_BASE_URL`) */
  publicBaseUrl: string | null;
  /** Retention of result files and links, in days. @defaultValue 7 (`RESULT_TTL_DAYS`) */
  resultTtlDays: number;
  /**
   * Finished task records older than this are deleted, hourly, except the newest 50 of each
   * analytic (the history contract); cameras and their references stay. @defaultValue 90
   * (`RECORD_RETENTION_DAYS`)
   */
  recordRetentionDays: number;
  /** Analytics worker processes; 0 makes a node that answers the API and runs no jobs. @defaultValue number of CPU cores (`WORKERS`) */
  workers: number;
  /**
   * What a worker process may hold (lib/jobs/worker-pool.ts); null: no bound. @defaultValue three
   * quarters of the box's memory shared by WORKERS, at least 768 MiB (`WORKER_MEMORY_MB`, 0 for
   * none; `WORKER_IDLE_MEMORY_MB`, half of it: a worker past it after a job is replaced;
   * `WORKER_MAX_JOBS`, 1000: jobs after which a worker is replaced)
   */
  workerMemory: { limitBytes: number; idleBytes: number; maxJobs: number } | null;
  /**
   * The PostgreSQL database shared by several nodes (`postgres://user:pass@host:port/db`), on a
   * server of the site's own; null keeps everything in SQLite under DATA_DIR, one box alone.
   * (`DATABASE_URL`)
   */
  databaseUrl: string | null;
  /** This node's name in /healthz, /metrics and the job leases it holds; null means "host name:port". (`NODE_ID`) */
  nodeId: string | null;
  /** How long a node's claim on a job lasts without a heartbeat, ms. @defaultValue 30 s (`JOB_LEASE_S`, in seconds) */
  jobLeaseMs: number;
  /** Largest accepted upload body, bytes. @defaultValue 2 GiB (`MAX_UPLOAD_MB`, in MiB) */
  maxUploadBytes: number;
  /** Jobs waiting or running before POSTs answer 503. @defaultValue 500 (`QUEUE_LIMIT`) */
  queueLimit: number;
  /** How long POST /kamcheck waits for the result before answering. @defaultValue 2000 (`KAMCHECK_WAIT_MS`) */
  kamcheckWaitMs: number;
  /** Time limit of one tamper-check job, ms; its worker is killed after it. @defaultValue 60000 (`KAMCHECK_TIMEOUT_MS`) */
  kamcheckTimeoutMs: number;
  /**
   * Time limit of one face-log job per frame of its input, ms, on top of a minute for start-up;
   * its worker is killed after it. 400 ms is ten times the real-time budget of a 25 fps frame.
   * @defaultValue 400 (`FACE_LOG_MS_PER_FRAME`)
   */
  faceLogMsPerFrame: number;
  /** Runs of a job before a worker crash or restart fails it for good. @defaultValue 3 (`JOB_MAX_ATTEMPTS`) */
  jobMaxAttempts: number;
  /**
   * Free space DATA_DIR must keep: uploads that would go below it answer 507. 1 GiB leaves room
   * for the results of the jobs already accepted and for SQLite's WAL. Running face logs are
   * stopped (`insufficient_storage`) below a quarter of it (lib/disk-space.ts); 0 turns both off.
   * @defaultValue 1 GiB (`MIN_FREE_DISK_MB`, in MiB)
   */
  minFreeDiskBytes: number;
  /** HTTPS certificate and key (PEM), both or neither; null serves plain HTTP. (`TLS_CERT`, `TLS_KEY`) */
  tls: TlsFiles | null;
  /** Length of a camera's time-of-day reference slot, minutes. @defaultValue 60 (`REFERENCE_SLOT_MINUTES`) */
  referenceSlotMinutes: number;
  /** Consecutive checks >= 50 that raise a camera's alarm. @defaultValue 2 (`ALARM_AFTER`) */
  alarmAfter: number;
  /** Consecutive checks < 50 that clear it. @defaultValue 2 (`CLEAR_AFTER`) */
  clearAfter: number;
  /**
   * A camera stream must give a frame within this (connecting included), and its clip within
   * twice it, or the capture fails, ms. @defaultValue 10 s (`SOURCE_TIMEOUT_S`)
   */
  sourceTimeoutMs: number;
  /** Consecutive failed captures of a camera's stream that make it `offline`. @defaultValue 2 (`OFFLINE_AFTER`) */
  offlineAfter: number;
  /** Receives every event (job.completed, camera.state_changed); null sends none but callback_url ones. (`WEBHOOK_URL`) */
  webhookUrl: string | null;
  /**
   * The key of the webhook signatures (its text, as UTF-8); null means "use or generate
   * DATA_DIR/webhook-secret" (lib/webhooks/secret.ts). At least 16 characters. (`WEBHOOK_SECRET`)
   */
  webhookSecret: string | null;
  /**
   * Hosts a request's `callback_url` may name: `host`, `host:port` or `*.domain` (any host under
   * it), lower case; null allows any. WEBHOOK_URL is the operator's and is not checked.
   * (`WEBHOOK_ALLOWED_HOSTS`, comma-separated)
   */
  webhookAllowedHosts: string[] | null;
  /** Time limit of one webhook delivery attempt, ms: a receiver slower than this is tried again later. @defaultValue 10000 (`WEBHOOK_TIMEOUT_MS`) */
  webhookTimeoutMs: number;
  /**
   * Wait before the second attempt of a delivery, ms; each later wait doubles, up to an hour.
   * For tests and tuning. @defaultValue 5000 (`WEBHOOK_BACKOFF_MS`)
   */
  webhookBackoffMs: number;
  /** How long after its event a delivery is tried before it is given up, ms. @defaultValue 24 h (`WEBHOOK_RETRY_HOURS`, in hours) */
  webhookRetryMs: number;
  /**
   * The MQTT broker that gets every event and each camera's retained state (lib/mqtt/); null sends
   * none. `mqtt://` or `mqtts://`, credentials in it or in MQTT_USERNAME / MQTT_PASSWORD. (`MQTT_URL`)
   */
  mqtt: MqttSettings | null;
  /**
   * Milestone XProtect's event server, where the changes of state of cameras with a `milestone`
   * setting go as analytics events (lib/milestone/), e.g. `http://xprotect:9090/`; null sends none.
   * (`MILESTONE_EVENT_URL`)
   */
  milestoneEventUrl: string | null;
  /**
   * What runs the face log's nets (BlazeFace, the face descriptor, the gender net): `onnxruntime`
   * or `opencv` (OpenCV DNN), the same networks and the same faces either way. Workers read it
   * from the environment they inherit.
   * @defaultValue DEFAULT_FACE_DETECTOR_RUNTIME (`FACE_DETECTOR_RUNTIME`)
   */
  faceDetectorRuntime: FaceDetectorRuntime;
  /**
   * Failed sign-ins (Basic, the console, API keys) allowed per client address and per user name
   * before the answer is 429, as `count/unit` windows; `none` for no limit (lib/users/sign-in-throttle.ts).
   * @defaultValue `1/second;5/minute;20/hour` (`SIGN_IN_LIMIT_PER_ADDRESS`) and
   * `10/minute;100/hour` (`SIGN_IN_LIMIT_PER_USER`)
   */
  signInLimits: { perAddress: RateLimit[]; perUser: RateLimit[] };
  /**
   * Proxies whose `X-Forwarded-For` names the client (addresses or CIDR ranges, comma-separated);
   * without them the client is the connection's peer. @defaultValue none (`TRUSTED_PROXIES`)
   */
  trustedProxies: string[];
  /** How long the audit trail keeps its records, in days. @defaultValue 365 (`AUDIT_RETENTION_DAYS`) */
  auditRetentionDays: number;
}

/** At most `count` failures within `windowMs`. */
export interface RateLimit {
  count: number;
  windowMs: number;
}

/** What can run the face log's nets (lib/facelog/detect/tile-runtime.ts, lib/facelog/appearance/face-net.ts). */
export const FACE_DETECTOR_RUNTIMES = ['onnxruntime', 'opencv'] as const;
export type FaceDetectorRuntime = (typeof FACE_DETECTOR_RUNTIMES)[number];
/** The faster of the two on the face-log bench (docs/benchmarks.md). */
export const DEFAULT_FACE_DETECTOR_RUNTIME: FaceDetectorRuntime = 'onnxruntime';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

/** A configuration value is invalid; the message names the variable. */
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR || './data'),
    credentials: env.AUTH_CREDENTIALS ? parseCredentials(env.AUTH_CREDENTIALS, 'AUTH_CREDENTIALS') : null,
    publicBaseUrl: env.PUBLIC_BASE_URL ? baseUrl(env.PUBLIC_BASE_URL) : null,
    resultTtlDays: number(env, 'RESULT_TTL_DAYS', 7, 0.0001, 3650),
    recordRetentionDays: number(env, 'RECORD_RETENTION_DAYS', 90, 0.0001, 36500),
    workers: integer(env, 'WORKERS', Math.max(1, os.availableParallelism()), 0, 256),
    workerMemory: workerMemory(env, integer(env, 'WORKERS', Math.max(1, os.availableParallelism()), 0, 256)),
    databaseUrl: env.DATABASE_URL ? databaseUrl(env.DATABASE_URL) : null,
    nodeId: env.NODE_ID ? nodeId(env.NODE_ID) : null,
    jobLeaseMs: Math.round(number(env, 'JOB_LEASE_S', 30, 1, 3600) * 1000),
    maxUploadBytes: integer(env, 'MAX_UPLOAD_MB', 2048, 1, 1024 * 1024) * 1024 * 1024,
    queueLimit: integer(env, 'QUEUE_LIMIT', 500, 1, 1_000_000),
    kamcheckWaitMs: integer(env, 'KAMCHECK_WAIT_MS', 2000, 0, 60_000),
    kamcheckTimeoutMs: integer(env, 'KAMCHECK_TIMEOUT_MS', 60_000, 100, 3_600_000),
    faceLogMsPerFrame: integer(env, 'FACE_LOG_MS_PER_FRAME', 400, 1, 600_000),
    jobMaxAttempts: integer(env, 'JOB_MAX_ATTEMPTS', 3, 1, 100),
    minFreeDiskBytes: integer(env, 'MIN_FREE_DISK_MB', 1024, 0, 1024 * 1024 * 1024) * 1024 * 1024,
    tls: tlsFiles(env),
    referenceSlotMinutes: integer(env, 'REFERENCE_SLOT_MINUTES', 60, 1, 1440),
    alarmAfter: integer(env, 'ALARM_AFTER', 2, 1, 1000),
    clearAfter: integer(env, 'CLEAR_AFTER', 2, 1, 1000),
    sourceTimeoutMs: Math.round(number(env, 'SOURCE_TIMEOUT_S', 10, 0.1, 600) * 1000),
    offlineAfter: integer(env, 'OFFLINE_AFTER', 2, 1, 1000),
    webhookUrl: env.WEBHOOK_URL ? httpUrl(env.WEBHOOK_URL, 'WEBHOOK_URL') : null,
    webhookSecret: env.WEBHOOK_SECRET ? webhookSecret(env.WEBHOOK_SECRET) : null,
    webhookAllowedHosts: env.WEBHOOK_ALLOWED_HOSTS ? allowedHosts(env.WEBHOOK_ALLOWED_HOSTS) : null,
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
    webhookBackoffMs: integer(env, 'WEBHOOK_BACKOFF_MS', 5000, 10, 3_600_000),
    webhookRetryMs: Math.round(number(env, 'WEBHOOK_RETRY_HOURS', 24, 0.0001, 24 * 30) * 3_600_000),
    mqtt: env.MQTT_URL ? mqttSettings(env) : null,
    milestoneEventUrl: env.MILESTONE_EVENT_URL ? httpUrl(env.MILESTONE_EVENT_URL, 'MILESTONE_EVENT_URL') : null,
    faceDetectorRuntime: faceDetectorRuntime(env),
    signInLimits: {
      perAddress: rateLimits(env, 'SIGN_IN_LIMIT_PER_ADDRESS', '1/second;5/minute;20/hour'),
      perUser: rateLimits(env, 'SIGN_IN_LIMIT_PER_USER', '10/minute;100/hour'),
    },
    trustedProxies: env.TRUSTED_PROXIES ? trustedProxies(env.TRUSTED_PROXIES) : [],
    auditRetentionDays: number(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36500),
  };
}

/** FACE_DETECTOR_RUNTIME: read here at start and again by each worker process (lib/facelog/models.ts). */
export function faceDetectorRuntime(env: NodeJS.ProcessEnv = process.env): FaceDetectorRuntime {
  const raw = env.FACE_DETECTOR_RUNTIME;
  if (raw === undefined || raw === '') return DEFAULT_FACE_DETECTOR_RUNTIME;
  const runtime = FACE_DETECTOR_RUNTIMES.find((r) => r === raw);
  if (!runtime) throw new ConfigError('FACE_DETECTOR_RUNTIME', `expected ${FACE_DETECTOR_RUNTIMES.join(' or ')}, got "${raw}"`);
  return runtime;
}

/** Reads TLS_CERT and TLS_KEY at start, so a missing, unreadable or mismatched file stops it there. */
function tlsFiles(env: NodeJS.ProcessEnv): TlsFiles | null {
  const certFile = env.TLS_CERT || '';
  const keyFile = env.TLS_KEY || '';
  if (!certFile && !keyFile) return null;
  if (!certFile) throw new ConfigError('TLS_CERT', 'TLS_KEY is set but TLS_CERT is not; HTTPS needs both (or neither for HTTP)');
  if (!keyFile) throw new ConfigError('TLS_KEY', 'TLS_CERT is set but TLS_KEY is not; HTTPS needs both (or neither for HTTP)');
  const read = (variable: string, file: string) => {
    try {
      return fs.readFileSync(path.resolve(file));
    } catch (err) {
      throw new ConfigError(variable, `cannot read "${file}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  const cert = read('TLS_CERT', certFile);
  const key = read('TLS_KEY', keyFile);
  try {
    tls.createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError('TLS_CERT', `"${certFile}" and "${keyFile}" are not a usable PEM certificate and private key: ${(err as Error).message}`);
  }
  return { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile), cert, key };
}

const RATE_UNITS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** `1/second;5/minute;20/hour` (units may be plural); `none` for no limit. */
function rateLimits(env: NodeJS.ProcessEnv, name: string, fallback: string): RateLimit[] {
  const text = env[name] || fallback;
  if (text.trim() === 'none') return [];
  return text
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^(\d{1,9})\s*\/\s*(second|minute|hour|day)s?$/i.exec(part);
      if (!m || Number(m[1]) < 1) throw new ConfigError(name, `expected limits like "1/second;5/minute;20/hour" (or "none"), got "${part}"`);
      return { count: Number(m[1]), windowMs: RATE_UNITS[m[2].toLowerCase()] };
    });
}

/** Addresses or CIDR ranges, IPv4 or IPv6, checked here so that a typo stops the start. */
function trustedProxies(text: string): string[] {
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of list) {
    const [address, prefix, extra] = entry.split('/');
    const family = net.isIP(address);
    const bits = family === 4 ? 32 : 128;
    const ok = family !== 0 && extra === undefined && (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits));
    if (!ok) throw new ConfigError('TRUSTED_PROXIES', `expected addresses or CIDR ranges (10.0.0.0/8, ::1), got "${entry}"`);
  }
  return list;
}

/** Parses `user:password[,user:password...]`. */
export function parseCredentials(text: string, variable: string): Credential[] {
  const list = text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((pair) => {
      const colon = pair.indexOf(':');
      if (colon <= 0 || colon === pair.length - 1) {
        throw new ConfigError(variable, 'expected user:password pairs separated by commas');
      }
      return { user: pair.slice(0, colon), password: pair.slice(colon + 1) };
    });
  if (list.length === 0) throw new ConfigError(variable, 'no credentials given');
  return list;
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new ConfigError(name, `expected a number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

const MIB = 1024 * 1024;
/** No default bound below this: a 1080p face log holds 700-900 MiB (docs/benchmarks.md). */
const MIN_DEFAULT_WORKER_MB = 768;

function workerMemory(env: NodeJS.ProcessEnv, workers: number): Config['workerMemory'] {
  const share = Math.floor((0.75 * os.totalmem()) / MIB / Math.max(1, workers));
  const limitMb = integer(env, 'WORKER_MEMORY_MB', Math.max(MIN_DEFAULT_WORKER_MB, share), 0, 1024 * 1024);
  if (limitMb === 0) return null;
  const idleMb = integer(env, 'WORKER_IDLE_MEMORY_MB', Math.floor(limitMb / 2), 1, limitMb);
  return { limitBytes: limitMb * MIB, idleBytes: idleMb * MIB, maxJobs: integer(env, 'WORKER_MAX_JOBS', 1000, 1, 100_000_000) };
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const value = number(env, name, fallback, min, max);
  if (!Number.isInteger(value)) throw new ConfigError(name, `expected a whole number, got "${env[name]}"`);
  return value;
}

function databaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('DATABASE_URL', 'not a URL; expected postgres://user:password@host:port/database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL', `expected a postgres:// URL, got ${url.protocol}//`);
  }
  return raw;
}

function nodeId(raw: string): string {
  if (!/^[\w.:@-]{1,100}$/.test(raw)) throw new ConfigError('NODE_ID', 'expected 1-100 letters, digits and . : @ _ -');
  return raw;
}

function baseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('PUBLIC_BASE_URL', `not an absolute URL: "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('PUBLIC_BASE_URL', 'expected an http:// or https:// URL');
  }
  return url.toString().replace(/\/+$/, '');
}

export interface MqttSettings {
  /** The broker's URL without its credentials: what the log may show. */
  url: string;
  username: string | null;
  password: string | null;
  /** Every topic is under it. @defaultValue vaa (`MQTT_TOPIC_PREFIX`) */
  topicPrefix: string;
}

function mqttSettings(env: NodeJS.ProcessEnv): MqttSettings {
  let url: URL;
  try {
    url = new URL(env.MQTT_URL!);
  } catch {
    throw new ConfigError('MQTT_URL', 'not a URL'); // the value may hold a password: not shown
  }
  if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:') throw new ConfigError('MQTT_URL', `only mqtt:// and mqtts:// are allowed, not ${url.protocol}`);
  const username = env.MQTT_USERNAME || decodeURIComponent(url.username) || null;
  const password = env.MQTT_PASSWORD || decodeURIComponent(url.password) || null;
  url.username = '';
  url.password = '';
  const topicPrefix = env.MQTT_TOPIC_PREFIX ?? 'vaa';
  if (!/^[^#+\u0000]{1,100}$/.test(topicPrefix) || topicPrefix.startsWith('/') || topicPrefix.endsWith('/')) {
    throw new ConfigError('MQTT_TOPIC_PREFIX', 'must be 1-100 characters without +, # or a leading or trailing /');
  }
  return { url: url.toString().replace(/\/$/, ''), username, password, topicPrefix };
}

function httpUrl(value: string, variable: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(variable, `"${value}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(variable, `only http and https URLs are allowed, not ${url.protocol}`);
  return url.toString();
}

/** Shorter keys are guessable; the generated one is 64 hex characters. */
const MIN_SECRET_LENGTH = 16;

function webhookSecret(raw: string): string {
  if (raw.length < MIN_SECRET_LENGTH) throw new ConfigError('WEBHOOK_SECRET', `must be at least ${MIN_SECRET_LENGTH} characters (unset, one is generated into DATA_DIR/webhook-secret)`);
  return raw;
}

/** `host`, `host:port`, `*.domain`, `*.domain:port`, `[ipv6]`, `[ipv6]:port`. */
const ALLOWED_HOST = /^(\*\.)?([a-z0-9_-]+(\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/;

function allowedHosts(raw: string): string[] {
  const list = raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  for (const entry of list) {
    if (!ALLOWED_HOST.test(entry)) throw new ConfigError('WEBHOOK_ALLOWED_HOSTS', `"${entry}" is not a host name, host:port or *.domain`);
  }
  if (list.length === 0) throw new ConfigError('WEBHOOK_ALLOWED_HOSTS', 'no hosts given');
  return list;
}
