// The XML of every face (SPEC: one record per detected face with frame, track, confidence and
// box; tracks name their sighting). Written with xmlbuilder2's callback builder straight to the
// file, so a long video's records are never one big string in memory.
//
// <face_log job_id input_video resolution width height fps frames frames_processed start_frame>
//   <sightings><sighting id start_frame end_frame frames confidence gender gender_confidence thumbnail>
//     <track number/>...</sighting></sightings>
//   <tracks><track number sighting_id start_frame end_frame faces [thumbnail]/></tracks>
//   <faces><face frame track confidence x y width height detected/></faces>
// </face_log>
// File names (thumbnail) are relative to the XML's own URL.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createCB } from 'xmlbuilder2';
import type { Sighting } from '../sightings/sighting.js';
import type { Track } from '../track/track.js';

export interface FaceLogHeader {
  jobId: string;
  inputVideo: string;
  resolution: string;
  width: number;
  height: number;
  fps: number;
  frames: number;
  framesProcessed: number;
  startFrame: number;
}

export async function writeFaceXml(
  file: string,
  header: FaceLogHeader,
  sightings: Sighting[],
  tracks: Track[],
  trackThumbnail: (t: Track) => string | null,
): Promise<void> {
  const out = createWriteStream(file);
  let failed: Error | null = null;
  out.on('error', (err) => (failed = err));
  const pending: string[] = [];
  const xml = createCB({
    data: (chunk: string) => pending.push(chunk),
    error: (err: Error) => (failed = err),
    prettyPrint: true,
  });
  const flush = async () => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending.length = 0;
    if (!out.write(text)) await once(out, 'drain');
  };

  const sightingOf = new Map<number, string>();
  for (const s of sightings) for (const n of s.tracks) sightingOf.set(n, s.sighting_id);

  xml.dec({ version: '1.0', encoding: 'UTF-8' });
  xml.ele('face_log', {
    job_id: header.jobId,
    input_video: header.inputVideo,
    resolution: header.resolution,
    width: String(header.width),
    height: String(header.height),
    fps: String(header.fps),
    frames: String(header.frames),
    frames_processed: String(header.framesProcessed),
    start_frame: String(header.startFrame),
  });
  xml.ele('sightings');
  for (const s of sightings) {
    xml.ele('sighting', {
      id: s.sighting_id,
      start_frame: String(s.start_frame),
      end_frame: String(s.end_frame),
      frames: String(s.frames),
      confidence: String(s.confidence),
      gender: s.gender,
      gender_confidence: String(s.gender_confidence),
      thumbnail: s.thumbnail,
    });
    for (const n of s.tracks) xml.ele('track', { number: String(n) }).up();
    xml.up();
  }
  xml.up();
  xml.ele('tracks');
  for (const t of tracks) {
    const attrs: Record<string, string> = {
      number: String(t.number),
      sighting_id: sightingOf.get(t.number) ?? '',
      start_frame: String(t.startFrame),
      end_frame: String(t.endFrame),
      faces: String(t.faces.length),
    };
    const thumb = trackThumbnail(t);
    if (thumb) attrs.thumbnail = thumb;
    xml.ele('track', attrs).up();
  }
  xml.up();
  await flush();

  xml.ele('faces');
  const records = tracks.flatMap((t) => t.faces.map((f) => ({ track: t.number, f })));
  records.sort((a, b) => a.f.frame - b.f.frame || a.track - b.track);
  for (let i = 0; i < records.length; i++) {
    const { track, f } = records[i];
    xml.ele('face', {
      frame: String(f.frame),
      track: String(track),
      confidence: f.confidence.toFixed(3),
      x: String(Math.round(f.box.x)),
      y: String(Math.round(f.box.y)),
      width: String(Math.round(f.box.width)),
      height: String(Math.round(f.box.height)),
      detected: String(f.detected),
    }).up();
    if (i % 1000 === 999) await flush();
  }
  xml.up();
  xml.up();
  xml.end();
  await flush();
  out.end();
  await once(out, 'close');
  if (failed) throw failed;
}
