// The cameras module: each camera's alarm state, settings, references per time-of-day slot, checks
// and state changes (schema.ts, camera-store.ts); the operator's alarm workflow (alarm-workflow.ts);
// how a check of a camera is set up (check-setup.ts),
// scheduled from its stream (check-schedule.ts) and what its outcome changes (check-outcome.ts);
// the /cameras routes (http/); and the retention of reference pictures (reference-files.ts). It
// calls the sources module (a camera's stream source), the jobs module (a check is a job) and the
// webhooks module (a change of state is an event), each through its store.
import type { Database } from '../db/database.js';
import type { OutboxStore } from '../webhooks/outbox-store.js';
import type { WebhookTargets } from '../webhooks/outbox.js';
import { heldAlarmsDuty } from './alarm-workflow.js';
import type { ModuleRoutes, ServiceModule } from '../service-module.js';
import type { SourceStore } from '../sources/source-store.js';
import { CameraStore } from './camera-store.js';
import type { CameraHttp } from './http/camera-http.js';
import { cameraRoutes } from './http/routes.js';
import { referenceFilesDuty, thumbnailsDuty } from './reference-files.js';
import { camerasSchema } from './schema.js';

export const camerasModule = {
  schema: camerasSchema,
  openStore: (db: Database, sources: SourceStore) => new CameraStore(db, sources),
  routes: (deps: Omit<CameraHttp, 'upload'>): ModuleRoutes => (router, http) => cameraRoutes(router, { ...deps, upload: http.upload }),
  duties: (dataDir: string, cameras: CameraStore, o: { sources: SourceStore; outbox: OutboxStore; targets: WebhookTargets }) => [
    referenceFilesDuty(dataDir, cameras),
    thumbnailsDuty(dataDir, cameras, o.sources),
    heldAlarmsDuty({ cameras, ...o }),
  ],
} satisfies ServiceModule;
