// How far a running job is (the task's `progress`): a bar, and frames done of frames in all with
// the time left once the appliance estimates it.
import type { JobProgress } from '../types.js';

/** "about 40 s", "about 3 min", "about 1 h 5 min". */
function timeLeft(s: number): string {
  if (s < 60) return `about ${Math.max(1, Math.round(s / 5) * 5)} s`;
  const m = Math.round(s / 60);
  return m < 60 ? `about ${m} min` : `about ${Math.floor(m / 60)} h ${m % 60} min`;
}

export function JobProgressBar({ progress: p, compact = false }: { progress: JobProgress; compact?: boolean }) {
  const text = p.frames_total
    ? `${p.frames_done} of ${p.frames_total} frames${p.percent !== null ? ` · ${p.percent}%` : ''}${p.eta_s !== null ? ` · ${timeLeft(p.eta_s)} left` : ''}`
    : `${p.frames_done} frames`;
  return (
    <div class={compact ? 'job-progress compact' : 'job-progress'}>
      <progress max={100} value={p.percent ?? undefined} aria-label="Progress of the job" />
      <span class="muted">{text}</span>
    </div>
  );
}
