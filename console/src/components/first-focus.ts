// Where the focus goes when a dialog, a confirmation or a form opens: to its first field or its
// button, moved in the commit that shows it (a layout effect), before the browser paints it. An
// effect would run after the paint, and for that frame the dialog would be on screen with the
// focus still on what opened it: an operator's first key would go nowhere (test/82).
import type { RefObject } from 'preact';
import { useLayoutEffect } from 'preact/hooks';

/**
 * Focuses `ref` whenever `shown` turns truthy or changes to another truthy value (a new secret);
 * `select` also selects an input's text, to be copied.
 */
export function useFirstFocus(ref: RefObject<HTMLElement | null>, shown: unknown = true, select = false): void {
  useLayoutEffect(() => {
    if (!shown) return;
    ref.current?.focus();
    if (select && ref.current instanceof HTMLInputElement) ref.current.select();
  }, [shown]);
}
