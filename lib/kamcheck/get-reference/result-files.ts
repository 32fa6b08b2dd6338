// The reference picker's result file: named with the job id, so that a client saving downloads
// under the last segment of their URL never overwrites another job's (SPEC).
export const referenceImageFile = (jobId: string) => `kamcheck_reference_${jobId}.jpg`;
