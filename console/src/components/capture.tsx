// A camera's last capture beside its reference: the picture of the last good capture, and what
// became of the last attempt when it failed.
import { reasonText, when } from '../format.js';
import type { CameraSource } from '../types.js';
import { Picture } from './picture.js';

/** `small`: the capture's thumbnail, loaded when near the view (a card of the camera list). */
export function LastCapturePicture({ camera, source, link = false, small = false }: { camera: string; source: CameraSource; link?: boolean; small?: boolean }) {
  const last = source.last_capture;
  const full = (last?.outcome === 'ok' ? last.image : null) ?? source.picture?.image ?? null;
  // the thumbnail is of source.picture: the last good capture's (last.image is the same picture when it has one)
  const image = small && full ? (source.picture?.thumbnail ?? full) : full;
  let caption = 'No capture yet';
  if (last?.outcome === 'ok') caption = `Last capture ${when(last.at)}`;
  else if (last) caption = `Capture failed ${when(last.at)}: ${reasonText(last.reason)}${source.picture ? ` (picture of ${when(source.picture.captured_at)})` : ''}`;
  return <Picture src={image} alt={`Last capture of ${camera}`} caption={caption} href={link ? (full ?? undefined) : undefined} lazy={small} />;
}

/** Why a camera is offline, from the camera or its source. */
export const offlineReason = (c: { offline_reason?: string | null; source?: CameraSource | null }) => c.offline_reason ?? c.source?.offline_reason ?? null;
