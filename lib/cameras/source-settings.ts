// A camera's stream source set, changed or removed (PUT /cameras/<camera>): in one transaction
// with the camera's record, which the source creates when it is new; a source removed while the
// camera is offline takes it back to the state its checks say (check-outcome.ts).
import { InvalidInputError } from '../errors.js';
import { leaveOffline, type OutcomeStores } from './check-outcome.js';
import type { WebhookTargets } from '../webhooks/outbox.js';

export const DEFAULT_CHECK_INTERVAL_S = 300;

export interface SourceChange {
  /** undefined: keep; null: remove. */
  url?: string | null;
  intervalS?: number;
  enabled?: boolean;
}

/**
 * Applies `change` to the camera's source; an absent field keeps what the source has. Resolves
 * with the URL of the source the camera now has, or null when it has none.
 */
export async function changeSource(o: OutcomeStores & { targets: WebhookTargets }, camera: string, change: SourceChange, now: number): Promise<string | null> {
  return o.cameras.transaction(async (tx) => {
    await o.cameras.ensure(tx, camera, now);
    const before = await o.sources.get(camera, tx);
    if (change.url === null) {
      if (before) {
        await o.sources.remove(tx, camera);
        await leaveOffline(o, tx, camera, now);
      }
      return null;
    }
    const url = change.url ?? before?.url;
    if (!url) {
      if (change.intervalS !== undefined || change.enabled !== undefined) throw new InvalidInputError(`"source_url" is required: camera "${camera}" has no stream source yet`);
      return null;
    }
    const intervalS = change.intervalS ?? before?.intervalS ?? DEFAULT_CHECK_INTERVAL_S;
    await o.sources.put(tx, camera, { url, intervalS, enabled: change.enabled ?? before?.enabled ?? true }, now);
    return url;
  });
}
