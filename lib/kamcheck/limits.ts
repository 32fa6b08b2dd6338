// The contract's limits on a tamper check, shared by the upload checks (HTTP process) and the
// worker. No OpenCV here: the HTTP process imports it.

/** The seed's limit on the clip length, in frames. */
export const MAX_TAMPER_FRAMES = 25;
