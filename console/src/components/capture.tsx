// A camera's last capture beside its reference: the picture of the last good capture, and what
// became of the last attempt when it failed.
import { reasonText, when } from '../format.js';
import type { CameraSource } from '../types.js';
import { Picture } from './picture.js';

export function LastCapturePicture({ camera, source, link = false }: { camera: string; source: CameraSource; link?: boolean }) {
  const last = source.last_capture;
  const image = (last?.outcome === 'ok' ? last.image : null) ?? source.picture?.image ?? null;
  let caption = 'No capture yet';
  if (last?.outcome === 'ok') caption = `Last capture ${when(last.at)}`;
  else if (last) caption = `Capture failed ${when(last.at)}: ${reasonText(last.reason)}${source.picture ? ` (picture of ${when(source.picture.captured_at)})` : ''}`;
  return <Picture src={image} alt={`Last capture of ${camera}`} caption={caption} href={link ? (image ?? undefined) : undefined} />;
}

/** Why a camera is offline, from the camera or its source. */
export const offlineReason = (c: { offline_reason?: string | null; source?: CameraSource | null }) => c.offline_reason ?? c.source?.offline_reason ?? null;
