// Cheap checks of an upload at request time: size, frame count, still or video. PNG, JPEG and
// MP4 are read from their headers here; anything else by ffprobe in a child process, so the HTTP
// event loop never decodes media. Nothing decodes every frame (the worker does, and fails the
// job if the data is corrupt).
import { execFile } from 'node:child_process';
import { firstStderrLine } from './ffmpeg-stderr.js';
import { readImageHeader } from './image-header.js';
import { readMp4VideoHeader } from './mp4-header.js';

export interface MediaInfo {
  kind: 'video' | 'image';
  width: number;
  height: number;
  /** Video: packets of the video stream (= frames for the codecs we take); image: 1. */
  frames: number;
  /** Frames per second; 0 for images or when the container does not say. */
  fps: number;
  format: string;
  codec: string;
}

/** The file is not a decodable video or image. */
export class MediaProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MediaProbeError';
  }
}

/** Seconds ffprobe may take before the upload is judged undecodable. */
const PROBE_TIMEOUT_MS = 15_000;

/**
 * Largest width or height taken: 8K UHD (7680x4320) fits. A 20000x20000 PNG of a few hundred
 * bytes (a decompression bomb) would need 1.2 GB of pixels in the worker; it is refused here,
 * from its header, before anything decodes it.
 */
export const MAX_FRAME_SIDE = 8192;

/** Formats ffmpeg reads as single still images. */
const IMAGE_FORMAT = /^(image2|[a-z0-9]+_pipe)$/;

export async function probeMedia(file: string): Promise<MediaInfo> {
  const info = await readMediaInfo(file);
  if (info.width > MAX_FRAME_SIDE || info.height > MAX_FRAME_SIDE) {
    throw new MediaProbeError(`${info.width}x${info.height} is larger than the ${MAX_FRAME_SIDE}x${MAX_FRAME_SIDE} the appliance decodes`);
  }
  return info;
}

async function readMediaInfo(file: string): Promise<MediaInfo> {
  // PNG and JPEG (what references and stills are) are read from their header in this process:
  // an ffprobe start costs ~80 ms of CPU on the appliance.
  const header = await readImageHeader(file);
  if (header) {
    return { kind: 'image', width: header.width, height: header.height, frames: 1, fps: 0, format: header.format, codec: header.format };
  }
  const mp4 = await readMp4VideoHeader(file);
  if (mp4) return { kind: 'video', ...mp4, format: 'mp4' };
  const args = [
    '-v', 'error',
    '-count_packets',
    '-select_streams', 'v:0',
    '-show_entries', 'stream=codec_name,width,height,nb_read_packets,avg_frame_rate,r_frame_rate:format=format_name',
    '-of', 'json',
    file,
  ];
  let stdout: string;
  try {
    stdout = await run('ffprobe', args);
  } catch (err) {
    throw new MediaProbeError(firstStderrLine((err as Error).message) || 'not a readable video or image');
  }
  const parsed = JSON.parse(stdout) as {
    streams?: { codec_name?: string; width?: number; height?: number; nb_read_packets?: string; avg_frame_rate?: string; r_frame_rate?: string }[];
    format?: { format_name?: string };
  };
  const stream = parsed.streams?.[0];
  const format = parsed.format?.format_name ?? '';
  if (!stream || !stream.width || !stream.height) throw new MediaProbeError('no video or image stream found');
  const frames = Number(stream.nb_read_packets ?? 0);
  const isImage = IMAGE_FORMAT.test(format);
  if (!isImage && frames < 1) throw new MediaProbeError('the video has no frames');
  return {
    kind: isImage ? 'image' : 'video',
    width: stream.width,
    height: stream.height,
    frames: isImage ? 1 : frames,
    fps: isImage ? 0 : rate(stream.avg_frame_rate) || rate(stream.r_frame_rate),
    format,
    codec: stream.codec_name ?? '',
  };
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: PROBE_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(String(stderr || err.message)));
      else resolve(stdout);
    });
  });
}

function rate(text: string | undefined): number {
  if (!text) return 0;
  const [num, den] = text.split('/').map(Number);
  const value = den ? num / den : num;
  return Number.isFinite(value) ? value : 0;
}
