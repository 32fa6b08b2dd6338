// Immerkaer's noise estimator: a 3x3 mask that cancels locally linear structure, so that what is
// left of a picture filtered with it is mostly noise.
import cv from '../video/opencv.js';

export const IMMERKAER = new cv.Mat([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], cv.CV_32F);
/** mean |response| of the mask to white noise of sigma 1 is 6 sqrt(2/pi). */
export const SIGMA_PER_RESPONSE = Math.sqrt(Math.PI / 2) / 6;
