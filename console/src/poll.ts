// Live pages: an API read repeated every few seconds while the page is open (and the tab is
// visible). A failed read keeps what was shown and says so; the next read may succeed.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export interface Polled<T> {
  data: T | null;
  error: ApiError | null;
  /** When the shown data was read. */
  updatedAt: Date | null;
  reload: () => void;
}

/** `settled`: once it holds for what was read, reading stops (a finished job changes no more). */
export function usePoll<T>(read: () => Promise<T>, intervalMs: number, key: string, settled?: (data: T) => boolean): Polled<T> {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; updatedAt: Date | null }>({ data: null, error: null, updatedAt: null });
  const tick = useRef(0);
  const shownKey = useRef(key);
  const [nudge, setNudge] = useState(0);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      const mine = ++tick.current;
      try {
        const data = await read();
        if (!stopped && mine === tick.current) setState({ data, error: null, updatedAt: new Date() });
        if (settled?.(data)) return;
      } catch (err) {
        if (!stopped && mine === tick.current) setState((s) => ({ ...s, error: err instanceof ApiError ? err : new ApiError(0, 'error', String(err)) }));
      }
      if (!stopped && intervalMs > 0) timer = setTimeout(run, document.hidden ? intervalMs * 3 : intervalMs);
    };
    if (shownKey.current !== key) {
      // Another resource: what was shown is not its data. A reload keeps it until the answer.
      shownKey.current = key;
      setState({ data: null, error: null, updatedAt: null });
    }
    run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key, nudge]);
  const reload = useCallback(() => setNudge((n) => n + 1), []);
  return { ...state, reload };
}
