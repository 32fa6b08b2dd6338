// A camera's state in colour and in words, never colour alone.
import type { CameraState } from '../types.js';

const LABEL: Record<CameraState, string> = { ok: 'OK', tampered: 'Tampered', offline: 'Offline' };

export const stateLabel = (state: CameraState) => LABEL[state] ?? state;

export function StateBadge({ state }: { state: CameraState }) {
  return <span class={`badge badge-${state}`}>{stateLabel(state)}</span>;
}

/** A finished task's outcome: queued/processing, done, failed. */
export function TaskStatus({ complete, success, message }: { complete: boolean; success?: boolean; message?: string }) {
  if (!complete) return <span class="badge badge-running" title={message}>{/^Queued/i.test(message ?? '') ? 'Queued' : 'Processing'}</span>;
  return success ? <span class="badge badge-done">Done</span> : <span class="badge badge-failed">Failed</span>;
}
