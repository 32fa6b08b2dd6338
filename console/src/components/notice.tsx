// Messages to the operator: errors in the API's own words, empty states, progress.
import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api.js';

export function ErrorNotice({ error, title }: { error: ApiError | Error; title?: string }) {
  return (
    <div class="notice notice-error" role="alert">
      {title && <strong>{title} </strong>}
      {error.message}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children && <div class="empty-body">{children}</div>}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** An upload's progress: a bar while the file goes, then what the appliance says. */
export function UploadProgress({ sent, total, label }: { sent: number; total: number; label: string }) {
  const pct = total > 0 ? Math.round((sent / total) * 100) : 0;
  return (
    <div class="progress" role="status">
      <progress max={100} value={pct} aria-label={label} />
      <span>
        {label}: {pct}%
      </span>
    </div>
  );
}
