// An action's outcome on a card: busy while it runs, then its message or the appliance's error,
// shown until the next action (or `clear`).
import { useState } from 'preact/hooks';
import type { ApiError } from '../api.js';
import { ErrorNotice } from './notice.js';

/** `failedTitle` heads an error, e.g. "Not saved:". */
export function useOutcome(failedTitle: string) {
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** Runs `what`, which resolves with the message to show. */
  const run = async (what: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await what());
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const clear = () => (setError(null), setDone(null));
  const notices = (
    <>
      {error && <ErrorNotice error={error} title={failedTitle} />}
      {done && (
        <div class="notice notice-ok" role="status">
          {done}
        </div>
      )}
    </>
  );
  return { run, busy, clear, notices };
}
