// A site's fleet of cameras for the console at scale: N cameras, each with a 640x480 reference (a
// frame of Debian's vtest.avi, JPEG at ffmpeg's quality 2: about 100-150 KB, as the 1000
// cameras had), written straight through the service's camera store, a few of them in alarm and
// some of those acknowledged. For the Chromium test of the cameras page and its bench.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { RunningService } from '../lib/service.js';
import { newReferenceFile } from '../lib/cameras/reference-files.js';
import { THUMBNAIL_WIDTH, thumbnailFile } from '../lib/data-files.js';
import { minuteOfDay, slotOf } from '../lib/cameras/time-of-day.js';
import { MEDIA_DIR } from './media.js';
import { VTEST_AVI } from './opencv-data.js';

/** Distinct pictures the fleet's references are copies of. */
const PICTURES = 8;

/** The fleet's reference pictures and their thumbnails (as the service makes them), cut once into the HTTP media folder. */
export function fleetPictures(): { picture: string; thumbnail: string }[] {
  fs.mkdirSync(MEDIA_DIR, { recursive: true });
  return Array.from({ length: PICTURES }, (_, i) => {
    const picture = path.join(MEDIA_DIR, `fleet-${i}.jpg`);
    const thumbnail = path.join(MEDIA_DIR, `fleet-${i}-thumbnail.jpg`);
    if (!fs.existsSync(picture)) {
      execFileSync('ffmpeg', ['-y', '-v', 'error', '-ss', String(5 + i * 9), '-i', VTEST_AVI, '-frames:v', '1', '-vf', 'scale=640:480', '-q:v', '2', picture]);
    }
    if (!fs.existsSync(thumbnail)) {
      execFileSync('ffmpeg', ['-y', '-v', 'error', '-i', picture, '-vf', `scale=${THUMBNAIL_WIDTH}:-2`, '-q:v', '5', thumbnail]);
    }
    return { picture, thumbnail };
  });
}

export interface Fleet {
  ids: string[];
  /** Cameras put in alarm, and those of them acknowledged. */
  tampered: string[];
  acknowledged: string[];
  /** Bytes of every camera's reference picture together. */
  referenceBytes: number;
}

/**
 * `count` cameras cam-0001...; every `alarmEvery`-th in alarm, every other one of those
 * acknowledged. With `thumbnails`, each picture's thumbnail is there as the service leaves it
 * after a PUT; without, as pictures of a release before thumbnails left them.
 */
export async function fillFleet(service: RunningService, dataDir: string, count: number, thumbnails = true, alarmEvery = 40): Promise<Fleet> {
  const pictures = fleetPictures();
  const now = Date.now();
  const fleet: Fleet = { ids: [], tampered: [], acknowledged: [], referenceBytes: 0 };
  for (let i = 1; i <= count; i++) {
    const id = `cam-${String(i).padStart(4, '0')}`;
    const { picture, thumbnail } = pictures[i % pictures.length];
    const target = newReferenceFile(dataDir, 'jpg');
    fs.copyFileSync(picture, target.absolute);
    if (thumbnails) {
      const small = path.join(dataDir, thumbnailFile(target.file));
      fs.mkdirSync(path.dirname(small), { recursive: true });
      fs.copyFileSync(thumbnail, small);
    }
    fleet.referenceBytes += fs.statSync(picture).size;
    const at = now - i * 1000;
    await service.cameras.addReference({
      id: target.id, camera: id, slot: slotOf(at, 60), capturedAt: at, minuteOfDay: minuteOfDay(at), sourceJob: null,
      file: target.file, width: 640, height: 480, createdAt: at, origin: 'uploaded',
    });
    fleet.ids.push(id);
    if (i % alarmEvery === 0) {
      const acked = (i / alarmEvery) % 2 === 0;
      await service.cameras.transaction(async (tx) => {
        const c = (await service.cameras.lock(tx, id))!;
        await service.cameras.update(tx, {
          ...c, state: 'tampered', checksState: 'tampered', stateSince: now - i * 60_000,
          acknowledgement: acked ? { at: now, by: 'fleet', comment: null } : null,
        });
      });
      fleet.tampered.push(id);
      if (acked) fleet.acknowledged.push(id);
    }
  }
  return fleet;
}
