// Names of a face log's result files. Each carries the job id, so a client that saves every
// download under the last segment of its URL never overwrites another job's files (SPEC).
export const overlayFile = (jobId: string) => `face_log_${jobId}.mp4`;
export const xmlFile = (jobId: string) => `face_log_${jobId}.xml`;
/** `n` counts the job's reported sightings from 1. */
export const sightingThumbnailFile = (jobId: string, n: number) => `${jobId}_sighting_${n}.jpg`;
export const trackThumbnailFile = (jobId: string, track: number) => `${jobId}_track_${track}.jpg`;
/** The drawn frame of an image upload (`results_image`). */
export const resultsImageFile = (jobId: string) => `face_log_${jobId}.jpg`;
