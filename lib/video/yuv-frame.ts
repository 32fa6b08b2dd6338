// A decoded frame as ffmpeg decodes video: planar YUV 4:2:0 (I420), BT.601 limited range.
//
// The face log keeps frames in this form from the decoder to the encoder: half the bytes of BGR,
// no colour conversion in either ffmpeg process (measured at 720p: 7.4 ms of CPU per frame to
// encode from I420 against 10.6 ms from BGR), and the overlay is drawn into the planes directly.
// The analysis converts to BGR only what it looks at: the whole frame when the detector runs,
// small windows around the tracked faces otherwise.
import cv, { withTemporaries } from './opencv.js';

/** Limited-range luma (16-235) and chroma (16-240) stretched to full range, then YUV2BGR. */
const LUMA_ALPHA = 255 / 219;
const LUMA_BETA = -16 * LUMA_ALPHA;
const CHROMA_ALPHA = 255 / 224;
const CHROMA_BETA = 128 - 128 * CHROMA_ALPHA;

export class YuvFrame {
  private i420_: cv.Mat | null = null;
  private bgr_: cv.Mat | null = null;

  /** `data` holds the Y plane (width x height), then U and V (width/2 x height/2); sizes even. */
  constructor(
    readonly data: Buffer,
    readonly width: number,
    readonly height: number,
  ) {
    if (width % 2 || height % 2) throw new Error(`I420 frames need even sizes, not ${width}x${height}`);
    if (data.length !== YuvFrame.bytes(width, height)) throw new Error(`an I420 frame of ${width}x${height} is ${YuvFrame.bytes(width, height)} bytes, not ${data.length}`);
  }

  static bytes(width: number, height: number): number {
    return (width * height * 3) / 2;
  }

  /** The whole frame as one (height * 3/2) x width Mat, as OpenCV's I420 conversions take it. */
  private i420(): cv.Mat {
    return (this.i420_ ??= new cv.Mat(this.data, (this.height * 3) / 2, this.width, cv.CV_8UC1));
  }

  /** The Y plane: a grey image of the frame (a view, not a copy). */
  luma(): cv.Mat {
    return this.i420().getRegion(new cv.Rect(0, 0, this.width, this.height));
  }

  /** The whole frame in BGR (converted once, then kept until release()). */
  bgr(): cv.Mat {
    return (this.bgr_ ??= this.i420().cvtColor(cv.COLOR_YUV2BGR_I420));
  }

  /**
   * The frame's rectangle x, y, w, h (frame pixels, inside the frame) in BGR, resized to
   * outWidth x outHeight: only that part is converted, and only the rows it spans are copied out
   * of the frame's bytes (a Mat made from a Buffer is a copy: the whole frame is 3 MB at 1080p,
   * the trackers' windows a few rows of it).
   */
  bgrRegion(x: number, y: number, w: number, h: number, outWidth: number, outHeight: number): cv.Mat {
    // every Mat made on the way is freed before the call returns (see opencv-setup.ts)
    return withTemporaries((made) => {
      const size = (m: cv.Mat) => (m.cols === outWidth && m.rows === outHeight ? m : made(m.resize(outHeight, outWidth, 0, 0, m.cols > outWidth ? cv.INTER_AREA : cv.INTER_LINEAR)));
      const plane = (offset: number, width: number, rx: number, ry: number, rw: number, rh: number, alpha: number, beta: number) => {
        const region = made(made(this.rows(offset, width, ry, rh)).getRegion(new cv.Rect(rx, 0, rw, rh)));
        return made(size(region).convertTo(cv.CV_8U, alpha, beta));
      };
      // The chroma pixels under the rectangle, rounded outwards.
      const cx = x >> 1;
      const cy = y >> 1;
      const cw = Math.max(1, Math.min(this.width / 2 - cx, Math.ceil((x + w) / 2) - cx));
      const ch = Math.max(1, Math.min(this.height / 2 - cy, Math.ceil((y + h) / 2) - cy));
      const yuv = made(
        new cv.Mat([
          plane(0, this.width, x, y, w, h, LUMA_ALPHA, LUMA_BETA),
          plane(this.width * this.height, this.width / 2, cx, cy, cw, ch, CHROMA_ALPHA, CHROMA_BETA),
          plane((this.width * this.height * 5) / 4, this.width / 2, cx, cy, cw, ch, CHROMA_ALPHA, CHROMA_BETA),
        ]),
      );
      return yuv.cvtColor(cv.COLOR_YUV2BGR);
    });
  }

  /**
   * Frees the Mats made from this frame now (the planes stay in `data`): the binding does not tell
   * V8 how large they are (see opencv-setup.ts), so waiting for the garbage collector would let
   * several MB per frame pile up.
   */
  release(): void {
    this.bgr_?.release();
    this.i420_?.release();
    this.i420_ = this.bgr_ = null;
  }

  /** Rows `first`..`first + count` of the plane at `offset` with `width` bytes a row, as a Mat (a copy). */
  private rows(offset: number, width: number, first: number, count: number): cv.Mat {
    return new cv.Mat(this.data.subarray(offset + first * width, offset + (first + count) * width), count, width, cv.CV_8UC1);
  }
}
