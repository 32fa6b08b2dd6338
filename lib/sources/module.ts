// The sources module: each camera's stream source and check schedule (schema.ts, source-store.ts),
// how a clip is cut from a stream (stream-capture.ts) and what its failures mean, and the
// retention of capture pictures (capture-files.ts). It calls no other module; the cameras module
// drives the checks and sets the sources (PUT /cameras/<camera>).
import type { Database } from '../db/database.js';
import type { ServiceModule } from '../service-module.js';
import { captureFilesDuty } from './capture-files.js';
import { sourcesSchema } from './schema.js';
import { SourceStore } from './source-store.js';

export const sourcesModule = {
  schema: sourcesSchema,
  openStore: (db: Database) => new SourceStore(db),
  duties: (dataDir: string, sources: SourceStore) => [captureFilesDuty(dataDir, sources)],
} satisfies ServiceModule;
