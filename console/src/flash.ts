// A message for the next page an action leads to ("Camera gate-1 was deleted.").
let pending: string | null = null;

export function setFlash(message: string): void {
  pending = message;
}

/** The message, once. */
export function takeFlash(): string | null {
  const m = pending;
  pending = null;
  return m;
}
