// The probability of a camera's last checks over time: a line of points on 0-100 with the alarm
// line at the camera's sensitivity (50 by default), each point coloured by the state the camera was in after it; failed checks are
// marked on the time axis. Plain SVG: nothing to load, prints and scales.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CameraCheck } from '../types.js';
import { percent, when } from '../format.js';

const H = 220;
/** Time labels closer than this (px) would overlap. */
const TICK_SPACING = 120;
const PAD = { left: 44, right: 16, top: 14, bottom: 34 };
/** Where a camera's alarm starts counting (ALARM_AFTER checks at or above it). */

/** `alarmLine`: the probability at which the camera's checks count as tampered. */
export function ProbabilityChart({ checks, alarmLine = 50 }: { checks: CameraCheck[]; alarmLine?: number }) {
  // Drawn at the width it is shown at, so that its text keeps its size.
  const box = useRef<HTMLElement>(null);
  const [W, setWidth] = useState(720);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(280, Math.round(entry.contentRect.width))));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const points = [...checks].reverse().map((c) => ({ ...c, t: new Date(c.finish_time).getTime() }));
  if (points.length === 0) return null;
  const t0 = points[0].t;
  const t1 = points[points.length - 1].t;
  const span = Math.max(1, t1 - t0);
  // Checks closer in time than a second each (HTTP-dates have whole seconds) stand side by side.
  const byIndex = t1 - t0 < 1000 * points.length;
  const position = new Map(points.map((p, i) => [p, byIndex ? i / Math.max(1, points.length - 1) : (p.t - t0) / span]));
  const x = (p: (typeof points)[number]) => (points.length === 1 ? (W + PAD.left - PAD.right) / 2 : PAD.left + position.get(p)! * (W - PAD.left - PAD.right));
  const y = (p: number) => PAD.top + (1 - p / 100) * (H - PAD.top - PAD.bottom);
  const scored = points.filter((p) => p.success && p.probability !== null);
  const line = scored.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p).toFixed(1)},${y(p.probability!).toFixed(1)}`).join(' ');
  const ticks: typeof points = [];
  for (const p of points) {
    const last = ticks[ticks.length - 1];
    if (!last || (x(p) - x(last) >= TICK_SPACING && when(p.finish_time) !== when(last.finish_time))) ticks.push(p);
  }
  const summary = `Probability of the last ${points.length} checks, from ${when(points[0].finish_time)} to ${when(points[points.length - 1].finish_time)}; the latest ${percent(points[points.length - 1].probability)}.`;
  return (
    <figure class="chart" ref={box}>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={summary}>
        {[0, 25, 50, 75, 100].map((p) => (
          <g key={p}>
            <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(p)} y2={y(p)} />
            <text class="axis" x={PAD.left - 8} y={y(p) + 4} text-anchor="end">
              {p}%
            </text>
          </g>
        ))}
        <line class="grid alarm" x1={PAD.left} x2={W - PAD.right} y1={y(alarmLine)} y2={y(alarmLine)} />
        <text class="axis alarm-label" x={W - PAD.right} y={y(alarmLine) - 6} text-anchor="end">
          alarm line ({alarmLine}%)
        </text>
        {line && <path class="series" d={line} />}
        {points.map((p) =>
          p.success && p.probability !== null ? (
            <circle key={p.job_id} class={`point point-${p.state}`} cx={x(p)} cy={y(p.probability)} r={4.5}>
              <title>{`${when(p.finish_time)}: ${percent(p.probability)}, camera ${p.state} after it`}</title>
            </circle>
          ) : (
            <g key={p.job_id} class="point-failed" transform={`translate(${x(p)},${y(0)})`}>
              <path d="M-4,-4 L4,4 M-4,4 L4,-4" />
              <title>{`${when(p.finish_time)}: the check failed`}</title>
            </g>
          ),
        )}
        {ticks.map((p, i) => (
          <text key={`t${i}`} class="axis" x={x(p)} y={H - 10} text-anchor={x(p) < PAD.left + 60 ? 'start' : x(p) > W - 60 ? 'end' : 'middle'}>
            {when(p.finish_time)}
          </text>
        ))}
      </svg>
      <figcaption>
        <span class="legend legend-ok">OK after the check</span>
        <span class="legend legend-tampered">Tampered after the check</span>
        <span class="legend legend-failed">Check failed</span>
      </figcaption>
    </figure>
  );
}
