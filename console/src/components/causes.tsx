// A tamper check's per-cause scores (0-100) as labelled bars, highest first.
import type { Causes } from '../types.js';

export const CAUSE_LABELS: Record<keyof Causes, string> = {
  blur: 'Blur',
  moved: 'Camera moved',
  masked: 'Masked',
  exposure: 'Exposure',
  frozen: 'Frozen feed',
  black: 'Black image',
};

export function topCause(causes: Causes | undefined): string | null {
  if (!causes) return null;
  const [name, value] = (Object.entries(causes) as [keyof Causes, number][]).sort((a, b) => b[1] - a[1])[0] ?? [];
  return name && value > 0 ? `${CAUSE_LABELS[name]} ${Math.round(value)}%` : null;
}

export function CauseBars({ causes, notJudged = [], compact = false }: { causes: Causes; notJudged?: (keyof Causes)[]; compact?: boolean }) {
  const entries = (Object.entries(causes) as [keyof Causes, number][]).sort((a, b) => b[1] - a[1]);
  return (
    <dl class={compact ? 'causes causes-compact' : 'causes'}>
      {entries.map(([name, value]) => (
        <div class="cause" key={name}>
          <dt>{CAUSE_LABELS[name] ?? name}</dt>
          <dd>
            <span class="bar" aria-hidden="true">
              <span class={value >= 50 ? 'fill high' : 'fill'} style={{ width: `${Math.max(0, Math.min(100, value))}%` }} />
            </span>
            <span class="value">{notJudged.includes(name) ? <span title="Too little signal in the clip to judge this cause">not judged</span> : `${Math.round(value)}%`}</span>
          </dd>
        </div>
      ))}
    </dl>
  );
}
