// What the cameras' HTTP face works with.
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { ResultLinks } from '../../http/result-links.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { JobStore } from '../../jobs/store.js';
import type { SourceStore } from '../../sources/source-store.js';
import type { OutboxStore } from '../../webhooks/outbox-store.js';
import type { CameraStore } from '../camera-store.js';
import type { CheckSchedule } from '../check-schedule.js';

export interface CameraHttp {
  cameras: CameraStore;
  sources: SourceStore;
  /** A camera that leaves `offline` announces it (a source removed). */
  outbox: OutboxStore;
  /** A check asked for by hand is a job: its task is answered as /kamcheck answers it. */
  jobs: JobStore;
  queue: JobQueue;
  checks: CheckSchedule;
  /** Signs the links of pictures. */
  links: ResultLinks;
  logger: Logger;
  config: Pick<Config, 'dataDir' | 'referenceSlotMinutes' | 'publicBaseUrl' | 'kamcheckWaitMs' | 'webhookUrl' | 'mqtt' | 'alarmAfter' | 'clearAfter'>;
  /** Parses a multipart upload (lib/http/upload.ts). */
  upload: Middleware;
}
