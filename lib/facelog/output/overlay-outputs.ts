// Where the overlay's drawn frames go: the overlay video (H.264 MP4), and for the jobs of an image
// the results image, a JPEG of the first drawn frame at the upload's own size. A face detection
// of an image writes the image alone.
import fs from 'node:fs/promises';
import cv from '../../video/opencv.js';
import type { VideoEncoder } from '../../video/video-encoder.js';
import type { YuvFrame } from '../../video/yuv-frame.js';

/** As the thumbnails: the boxes and numbers stay crisp. */
const RESULTS_IMAGE_QUALITY = 90;

export class OverlayOutputs {
  private jpeg: Buffer | null = null;

  /**
   * `image`: where the results image goes and the upload's size (decoded frames are rounded up to
   * even sizes, see video/frame-reader.ts; the image is cut back to the upload's).
   */
  constructor(
    private readonly video: VideoEncoder | null,
    private readonly image: { file: string; width: number; height: number } | null,
  ) {}

  async write(frame: YuvFrame): Promise<void> {
    if (this.image && !this.jpeg) {
      // Before the video takes the frame: its bytes are handed over to the encoder's thread.
      const bgr = frame.bgr();
      const picture = bgr.getRegion(new cv.Rect(0, 0, this.image.width, this.image.height));
      this.jpeg = cv.imencode('.jpg', picture, [cv.IMWRITE_JPEG_QUALITY, RESULTS_IMAGE_QUALITY]);
      frame.release();
    }
    await this.video?.write(frame);
  }

  async finish(): Promise<void> {
    await this.video?.finish();
    if (this.image && this.jpeg) await fs.writeFile(this.image.file, this.jpeg);
  }

  abort(): void {
    this.video?.abort();
  }
}
