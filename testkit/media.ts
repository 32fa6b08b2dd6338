// Small media files for the HTTP tests, cut with ffmpeg from Debian's opencv-doc footage and
// cached under test/fixtures/generated/http/.
import fs from 'node:fs';
import path from 'node:path';
import { OPENCV_DATA_DIR, VTEST_AVI } from './opencv-data.js';
import { ffmpeg } from './ffmpeg.js';

export const MEDIA_DIR = path.resolve('test/fixtures/generated/http');

export interface TestMedia {
  /** 20 frames of vtest.avi at 320x240, H.264 MP4. */
  clip: string;
  /** A frame of vtest.avi from another time, 320x240 PNG: the reference. */
  reference: string;
  /** 26 frames: one more than the tamper check allows. */
  clip26: string;
  /** A 640x480 reference: size mismatch with `clip`. */
  referenceLarge: string;
  /** 25 frames of 1920x1080 (vtest upscaled), with a 1080p reference: for slower jobs. */
  clipHd: string;
  referenceHd: string;
  /** The first 3000 bytes of an MP4 whose index is at the end. */
  truncated: string;
  /** Plain text named .mp4. */
  textAsVideo: string;
  /** A JPEG image. */
  jpeg: string;
  /** A frame from within `clip`'s second, 320x240 JPEG: a reference `clip` scores 0 against (`reference`, 40 s later, a few percent). */
  referenceNear: string;
  /** `clip` with a grey board over the left 60% of the view: masked, scores 100. */
  clipCovered: string;
  /** `referenceNear` with a screen in its top right corner (SCREEN_AREA) showing a still of the footage. */
  referenceScreen: string;
  /** `clip` with that screen showing a moving picture: flat colours that change and a bar that runs across (masked, 99, against `referenceScreen`). */
  clipScreen: string;
  /** `clipScreen` with a grey board over the rest of the view (the left 55%). */
  clipScreenCovered: string;
  /** `clip` at 6% of its brightness: too dark to judge (black). */
  clipDark: string;
  /** `clip` as a night: 0.45 of its light, colours at 0.6, noise sigma 12; a few percent against `referenceNear`. */
  clipNight: string;
}

/** Where the screen of `clipScreen` is, as an ignored area: x 0.55-1, y 0-0.45 of the view (176,0 144x108 at 320x240). */
export const SCREEN_AREA: [number, number][] = [[0.55, 0], [1, 0], [1, 0.45], [0.55, 0.45]];

export function testMedia(): TestMedia {
  fs.mkdirSync(MEDIA_DIR, { recursive: true });
  const f = (name: string) => path.join(MEDIA_DIR, name);
  const vtest = VTEST_AVI;
  const media: TestMedia = {
    clip: f('clip20.mp4'),
    reference: f('reference.png'),
    clip26: f('clip26.mp4'),
    referenceLarge: f('reference-640.png'),
    clipHd: f('clip-hd.mp4'),
    referenceHd: f('reference-hd.png'),
    truncated: f('truncated.mp4'),
    textAsVideo: f('text.mp4'),
    jpeg: f('still.jpg'),
    referenceNear: f('reference-near.jpg'),
    clipCovered: f('clip20-covered.mp4'),
    referenceScreen: f('reference-screen.jpg'),
    clipScreen: f('clip20-screen.mp4'),
    clipScreenCovered: f('clip20-screen-covered.mp4'),
    clipDark: f('clip20-dark.mp4'),
    clipNight: f('clip20-night.mp4'),
  };
  const h264 = ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart'];
  const make = (file: string, build: () => void) => {
    if (!fs.existsSync(file)) build();
  };
  make(media.clip, () => ffmpeg(['-ss', '20', '-i', vtest, '-frames:v', '20', '-vf', 'scale=320:240', ...h264, media.clip]));
  make(media.clip26, () => ffmpeg(['-ss', '20', '-i', vtest, '-frames:v', '26', '-vf', 'scale=320:240', ...h264, media.clip26]));
  make(media.reference, () => ffmpeg(['-ss', '60', '-i', vtest, '-frames:v', '1', '-vf', 'scale=320:240', media.reference]));
  make(media.referenceLarge, () => ffmpeg(['-ss', '60', '-i', vtest, '-frames:v', '1', '-vf', 'scale=640:480', media.referenceLarge]));
  make(media.clipHd, () => ffmpeg(['-ss', '30', '-i', vtest, '-frames:v', '25', '-vf', 'scale=1920:1080', ...h264, media.clipHd]));
  make(media.referenceHd, () => ffmpeg(['-ss', '60', '-i', vtest, '-frames:v', '1', '-vf', 'scale=1920:1080', media.referenceHd]));
  // Without +faststart the index (moov) is at the end: cutting the file loses it.
  make(media.truncated, () => {
    const whole = f('clip-moov-at-end.mp4');
    ffmpeg(['-ss', '20', '-i', vtest, '-frames:v', '20', '-vf', 'scale=320:240', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', whole]);
    fs.writeFileSync(media.truncated, fs.readFileSync(whole).subarray(0, 3000));
  });
  make(media.textAsVideo, () => fs.writeFileSync(media.textAsVideo, 'this is not a video\n'.repeat(50)));
  make(media.jpeg, () => ffmpeg(['-i', path.join(OPENCV_DATA_DIR, 'building.jpg'), '-vf', 'scale=320:240', media.jpeg]));
  make(media.referenceNear, () => ffmpeg(['-ss', '21', '-i', vtest, '-frames:v', '1', '-vf', 'scale=320:240', '-q:v', '2', media.referenceNear]));
  make(media.clipCovered, () =>
    ffmpeg(['-ss', '20', '-i', vtest, '-frames:v', '20', '-vf', 'scale=320:240,drawbox=x=0:y=0:w=192:h=240:color=gray:t=fill', ...h264, media.clipCovered]),
  );
  make(media.referenceScreen, () =>
    ffmpeg(['-i', media.referenceNear, '-ss', '100', '-i', vtest, '-filter_complex', '[1:v]scale=144:108,trim=end_frame=1[s];[0:v][s]overlay=176:0', '-frames:v', '1', '-q:v', '2', media.referenceScreen]),
  );
  // the screen: a colour whose hue turns, with a white bar running across it (ffmpeg's own generators)
  const screen = 'color=c=0x3060c0:s=144x108:r=25,hue=H=t*6,drawbox=x=mod(t*200\\,144):y=40:w=24:h=28:color=white:t=fill';
  const withScreen = (file: string, after: string) =>
    ffmpeg(['-ss', '20', '-i', vtest, '-f', 'lavfi', '-i', screen, '-filter_complex', `[0:v]scale=320:240[a];[a][1:v]overlay=176:0:shortest=1${after}`, '-frames:v', '20', ...h264, file]);
  make(media.clipScreen, () => withScreen(media.clipScreen, ''));
  make(media.clipScreenCovered, () => withScreen(media.clipScreenCovered, ',drawbox=x=0:y=0:w=176:h=240:color=gray:t=fill'));
  // a night as the camera's gain leaves it: 0.45 of the light, its colours faded, with sensor noise
  // (ffmpeg's noise filter has a fixed seed, so the file is the same on every machine)
  make(media.clipNight, () =>
    ffmpeg(['-ss', '20', '-i', vtest, '-frames:v', '20', '-vf', 'scale=320:240,lutyuv=y=val*0.45:u=128+(val-128)*0.6:v=128+(val-128)*0.6,noise=alls=12:allf=t', ...h264, media.clipNight]),
  );
  make(media.clipDark, () => ffmpeg(['-ss', '20', '-i', vtest, '-frames:v', '20', '-vf', 'scale=320:240,lutyuv=y=val*0.06', ...h264, media.clipDark]));
  return media;
}
