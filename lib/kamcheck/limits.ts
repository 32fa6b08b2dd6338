// The contract's limits on a tamper check (and the reference picker's), shared by the upload checks (HTTP process) and the
// worker. No OpenCV here: the HTTP process imports it.

/** The seed's limit on the clip length, in frames. */
export const MAX_TAMPER_FRAMES = 25;

/**
 * Longest clip a reference is picked from (kamcheck_get_reference): 10 s at 25 fps, so that the
 * passers-by of one moment are gone in another. The worker decodes the whole clip (250 frames of
 * 1080p took 2.5 s of CPU on the appliance's VM, well inside KAMCHECK_TIMEOUT_MS) and compares
 * MAX_STATISTIC_FRAMES of them, spread over it.
 */
export const MAX_REFERENCE_CLIP_FRAMES = 250;
