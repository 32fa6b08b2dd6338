// A camera's sensitivity: the probability at which one of its checks counts as tampered. The
// analysis and its probability are the same at every level; a level moves the line the camera's
// alarm state draws on it, so a busy scene can ask for more evidence and a quiet one for less.
// The bench (scripts/bench-kamcheck-accuracy.ts) prints each level's false alarms and detections.

export const SENSITIVITIES = ['low', 'medium', 'high'] as const;
export type Sensitivity = (typeof SENSITIVITIES)[number];

/** `medium` is the line every check drew before levels existed. */
export const DEFAULT_SENSITIVITY: Sensitivity = 'medium';

/** At or above this probability a check counts as tampered, per level. */
export const TAMPERED_AT: Record<Sensitivity, number> = { low: 60, medium: 50, high: 35 };
