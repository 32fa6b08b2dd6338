// Sizes and frame counts read from PNG/JPEG/MP4 headers agree with ffprobe on real files.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { readImageHeader } from '../lib/video/image-header.js';
import { readMp4VideoHeader } from '../lib/video/mp4-header.js';
import { probeMedia } from '../lib/video/probe.js';
import { testMedia } from '../testkit/media.js';
import { OPENCV_DATA_DIR, VTEST_AVI } from '../testkit/opencv-data.js';

function ffprobe(file: string): { width: number; height: number; frames: number } {
  const out = execFileSync('ffprobe', [
    '-v', 'error', '-count_packets', '-select_streams', 'v:0',
    '-show_entries', 'stream=width,height,nb_read_packets', '-of', 'json', file,
  ]).toString();
  const s = JSON.parse(out).streams[0];
  return { width: s.width, height: s.height, frames: Number(s.nb_read_packets) };
}

describe('media headers', function () {
  it('reads PNG and JPEG sizes like ffprobe', async () => {
    const images = fs.readdirSync(OPENCV_DATA_DIR).filter((f) => /\.(png|jpe?g)$/i.test(f)).slice(0, 40);
    expect(images.length).to.be.above(20);
    for (const name of images) {
      const file = path.join(OPENCV_DATA_DIR, name);
      const header = await readImageHeader(file);
      const probed = ffprobe(file);
      expect(header, name).to.not.equal(null);
      expect([header!.width, header!.height], name).to.deep.equal([probed.width, probed.height]);
    }
  });

  it('reads MP4 frame counts and sizes like ffprobe, with the index at either end', async () => {
    const media = testMedia();
    for (const file of [media.clip, media.clip26, media.clipHd, path.join(path.dirname(media.clip), 'clip-moov-at-end.mp4')]) {
      const header = await readMp4VideoHeader(file);
      const probed = ffprobe(file);
      expect(header, file).to.not.equal(null);
      expect([header!.width, header!.height, header!.frames], file).to.deep.equal([probed.width, probed.height, probed.frames]);
    }
  });

  it('leaves other containers to ffprobe and refuses what nothing can read', async () => {
    const avi = VTEST_AVI;
    expect(await readMp4VideoHeader(avi)).to.equal(null);
    expect(await probeMedia(avi)).to.deep.include({ kind: 'video', width: 768, height: 576, frames: 795 });
    const media = testMedia();
    expect(await readMp4VideoHeader(media.truncated)).to.equal(null);
    let error: Error | null = null;
    try {
      await probeMedia(media.truncated);
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).to.equal('moov atom not found');
  });
});
