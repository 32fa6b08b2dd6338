// What the appliance keeps about each camera (every statement of the cameras module; its tables
// and their migrations are in schema.ts): its alarm state, its references per time-of-day slot,
// its last checks, and the checks on their way. Reference pictures are files under
// DATA_DIR/references (reference-files.ts); rows name them.
import type { Database, Tx } from '../db/database.js';
import { timeOfDayDistance } from './time-of-day.js';

export type CameraState = 'ok' | 'tampered';

export interface CameraRecord {
  id: string;
  state: CameraState;
  /** When the state last changed (or the camera was first seen), ms. */
  stateSince: number;
  /** Consecutive checks on the other side of 50 than the state: they count towards a change. */
  streak: number;
  createdAt: number;
  lastCheckAt: number | null;
  lastJobId: string | null;
  lastProbability: number | null;
  /** References on record, every slot. */
  referenceCount: number;
}

export interface ReferenceRecord {
  id: string;
  camera: string;
  slot: number;
  capturedAt: number;
  /** Local time of day of capturedAt, whole minutes: what "nearest in time of day" compares. */
  minuteOfDay: number;
  /** The check whose clip (or upload) it came from; null when set by hand (PUT). */
  sourceJob: string | null;
  /** Path relative to DATA_DIR. */
  file: string;
  width: number;
  height: number;
  createdAt: number;
}

export interface CheckRecord {
  jobId: string;
  capturedAt: number;
  finishedAt: number;
  success: boolean;
  probability: number | null;
  /** The camera's state after this check. */
  state: CameraState;
}

/** References kept per slot: the newest is used, the older ones are for audit. */
export const REFERENCES_PER_SLOT = 3;
/** Checks kept per camera (GET /cameras/<camera>). */
export const CHECKS_KEPT = 50;

interface CameraRow {
  id: string;
  state: CameraState;
  state_since: number | string;
  streak: number | string;
  created_at: number | string;
  last_check_at: number | string | null;
  last_job_id: string | null;
  last_probability: number | string | null;
  reference_count?: number | string;
}

interface ReferenceRow {
  id: string;
  camera: string;
  slot: number | string;
  captured_at: number | string;
  minute_of_day: number | string;
  source_job: string | null;
  file: string;
  width: number | string;
  height: number | string;
  created_at: number | string;
}

interface CheckRow {
  job_id: string;
  captured_at: number | string;
  finished_at: number | string;
  success: number | string;
  probability: number | string | null;
  state: CameraState;
}

const nullable = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Number(v));

export function cameraFromRow(r: CameraRow): CameraRecord {
  return {
    id: r.id,
    state: r.state,
    stateSince: Number(r.state_since),
    streak: Number(r.streak),
    createdAt: Number(r.created_at),
    lastCheckAt: nullable(r.last_check_at),
    lastJobId: r.last_job_id,
    lastProbability: nullable(r.last_probability),
    referenceCount: Number(r.reference_count ?? 0),
  };
}

function referenceFromRow(r: ReferenceRow): ReferenceRecord {
  return {
    id: r.id,
    camera: r.camera,
    slot: Number(r.slot),
    capturedAt: Number(r.captured_at),
    minuteOfDay: Number(r.minute_of_day),
    sourceJob: r.source_job,
    file: r.file,
    width: Number(r.width),
    height: Number(r.height),
    createdAt: Number(r.created_at),
  };
}

const CAMERA_COLUMNS = `c.*, (SELECT COUNT(*) FROM camera_references r WHERE r.camera = c.id) AS reference_count`;

/** A camera is on record from its first reference on. */
async function ensureCamera(tx: Tx, id: string, at: number): Promise<void> {
  await tx.run(
    `INSERT INTO cameras (id, state, state_since, streak, created_at) VALUES (?, 'ok', ?, 0, ?) ON CONFLICT (id) DO NOTHING`,
    id,
    at,
    at,
  );
}

/** Records a reference and keeps the newest REFERENCES_PER_SLOT of its slot. */
export async function insertReference(tx: Tx, ref: ReferenceRecord): Promise<void> {
  await ensureCamera(tx, ref.camera, ref.createdAt);
  await tx.run(
    `INSERT INTO camera_references (id, camera, slot, captured_at, minute_of_day, source_job, file, width, height, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ref.id,
    ref.camera,
    ref.slot,
    ref.capturedAt,
    Math.floor(ref.minuteOfDay),
    ref.sourceJob,
    ref.file,
    ref.width,
    ref.height,
    ref.createdAt,
  );
  // The files of dropped references stay until the sweep (reference-files.ts): a queued check may still read one.
  await tx.run(
    `DELETE FROM camera_references WHERE camera = ? AND slot = ? AND seq NOT IN
       (SELECT seq FROM camera_references WHERE camera = ? AND slot = ? ORDER BY seq DESC LIMIT ${REFERENCES_PER_SLOT})`,
    ref.camera,
    ref.slot,
    ref.camera,
    ref.slot,
  );
}

/**
 * The camera's row, locked until the transaction ends (PostgreSQL; SQLite writes one transaction
 * at a time): checks of one camera that finish together count in turn. Null when there is none.
 */
export async function lockCamera(tx: Tx, id: string): Promise<CameraRecord | null> {
  if ((await tx.run('UPDATE cameras SET streak = streak WHERE id = ?', id)) === 0) return null;
  return cameraFromRow((await tx.get<CameraRow>(`SELECT ${CAMERA_COLUMNS} FROM cameras c WHERE c.id = ?`, id))!);
}

/** Writes a camera's state and last check (as lockCamera read it, changed). */
export async function updateCamera(tx: Tx, c: CameraRecord): Promise<void> {
  await tx.run(
    `UPDATE cameras SET state = ?, state_since = ?, streak = ?, last_check_at = ?, last_job_id = ?, last_probability = ? WHERE id = ?`,
    c.state,
    c.stateSince,
    c.streak,
    c.lastCheckAt,
    c.lastJobId,
    c.lastProbability,
    c.id,
  );
}

/** Adds a check to the camera's history and keeps its newest CHECKS_KEPT. */
export async function recordCheck(tx: Tx, camera: string, check: CheckRecord): Promise<void> {
  await tx.run(
    `INSERT INTO camera_checks (camera, job_id, captured_at, finished_at, success, probability, state) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    camera,
    check.jobId,
    check.capturedAt,
    check.finishedAt,
    check.success ? 1 : 0,
    check.probability,
    check.state,
  );
  await tx.run(
    `DELETE FROM camera_checks WHERE camera = ? AND seq NOT IN (SELECT seq FROM camera_checks WHERE camera = ? ORDER BY seq DESC LIMIT ${CHECKS_KEPT})`,
    camera,
    camera,
  );
}

/** The reference files rows name (the sweep of unlisted files, reference-files.ts). */
export async function listedReferenceFiles(db: Database): Promise<Set<string>> {
  return new Set((await db.sql.all<{ file: string }>('SELECT file FROM camera_references')).map((r) => r.file));
}

export function addReference(db: Database, ref: ReferenceRecord): Promise<void> {
  return db.transaction((tx) => insertReference(tx, ref));
}

export async function listCameras(db: Database): Promise<CameraRecord[]> {
  const rows = await db.sql.all<CameraRow>(`SELECT ${CAMERA_COLUMNS} FROM cameras c ORDER BY c.id`);
  return rows.map(cameraFromRow);
}

export async function getCamera(db: Database, id: string): Promise<CameraRecord | null> {
  const row = await db.sql.get<CameraRow>(`SELECT ${CAMERA_COLUMNS} FROM cameras c WHERE c.id = ?`, id);
  return row ? cameraFromRow(row) : null;
}

/** Cameras by alarm state (metrics). */
export async function cameraStateCounts(db: Database): Promise<{ state: CameraState; count: number }[]> {
  const rows = await db.sql.all<{ state: CameraState; count: number | string }>('SELECT state, COUNT(*) AS count FROM cameras GROUP BY state');
  return rows.map((r) => ({ state: r.state, count: Number(r.count) }));
}

/** Every reference of a camera, by slot, newest first within a slot. */
export async function cameraReferences(db: Database, camera: string): Promise<ReferenceRecord[]> {
  const rows = await db.sql.all<ReferenceRow>('SELECT * FROM camera_references WHERE camera = ? ORDER BY slot, seq DESC', camera);
  return rows.map(referenceFromRow);
}

/** Every camera's references, by camera: by slot, newest first within a slot (the camera list). */
export async function referencesByCamera(db: Database): Promise<Map<string, ReferenceRecord[]>> {
  const rows = await db.sql.all<ReferenceRow>('SELECT * FROM camera_references ORDER BY camera, slot, seq DESC');
  const byCamera = new Map<string, ReferenceRecord[]>();
  for (const r of rows.map(referenceFromRow)) byCamera.set(r.camera, [...(byCamera.get(r.camera) ?? []), r]);
  return byCamera;
}

/**
 * The reference a check at this time of day uses when the clip is of any size: of the newest
 * reference of each slot, the one nearest in time of day (chooseReference, without the size).
 */
export function currentReference(refs: ReferenceRecord[], minuteOfDay: number): ReferenceRecord | null {
  const newestPerSlot = new Map<number, ReferenceRecord>();
  for (const r of refs) if (!newestPerSlot.has(r.slot)) newestPerSlot.set(r.slot, r); // newest first within a slot
  const candidates = [...newestPerSlot.values()];
  candidates.sort((a, b) => timeOfDayDistance(a.minuteOfDay, minuteOfDay) - timeOfDayDistance(b.minuteOfDay, minuteOfDay) || b.createdAt - a.createdAt);
  return candidates[0] ?? null;
}

export async function getReference(db: Database, camera: string, id: string): Promise<ReferenceRecord | null> {
  const row = await db.sql.get<ReferenceRow>('SELECT * FROM camera_references WHERE camera = ? AND id = ?', camera, id);
  return row ? referenceFromRow(row) : null;
}

/** The camera's last checks, newest first. */
export async function cameraChecks(db: Database, camera: string, limit = CHECKS_KEPT): Promise<CheckRecord[]> {
  const rows = await db.sql.all<CheckRow>(`SELECT * FROM camera_checks WHERE camera = ? ORDER BY seq DESC LIMIT ${Math.floor(limit)}`, camera);
  return rows.map((r) => ({
    jobId: r.job_id,
    capturedAt: Number(r.captured_at),
    finishedAt: Number(r.finished_at),
    success: Number(r.success) === 1,
    probability: nullable(r.probability),
    state: r.state,
  }));
}

/** Forgets a camera: its state, references and checks. False when there was none. */
export async function deleteCamera(db: Database, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const found = (await tx.run('DELETE FROM cameras WHERE id = ?', id)) === 1;
    await tx.run('DELETE FROM camera_references WHERE camera = ?', id);
    await tx.run('DELETE FROM camera_checks WHERE camera = ?', id);
    return found;
  });
}

export type ReferenceChoice =
  | { found: ReferenceRecord }
  | { none: true }
  | { otherSizes: { width: number; height: number }[] };

/**
 * The reference a check without an image uses: of the newest reference of each slot, the one
 * nearest in time of day (round midnight), among those of the clip's size.
 */
export async function chooseReference(db: Database, camera: string, minuteOfDay: number, width: number, height: number): Promise<ReferenceChoice> {
  const refs = await cameraReferences(db, camera);
  if (refs.length === 0) return { none: true };
  const newestPerSlot = new Map<number, ReferenceRecord>();
  for (const r of refs) if (!newestPerSlot.has(r.slot)) newestPerSlot.set(r.slot, r);
  const sized = [...newestPerSlot.values()].filter((r) => r.width === width && r.height === height);
  if (sized.length === 0) {
    const sizes = new Map(refs.map((r) => [`${r.width}x${r.height}`, { width: r.width, height: r.height }]));
    return { otherSizes: [...sizes.values()] };
  }
  sized.sort((a, b) => timeOfDayDistance(a.minuteOfDay, minuteOfDay) - timeOfDayDistance(b.minuteOfDay, minuteOfDay) || b.createdAt - a.createdAt);
  return { found: sized[0] };
}

/** What a check accepted for a camera needs when it finishes; written with its job. */
export interface PendingCheck {
  jobId: string;
  camera: string;
  /** When the clip was captured, ms. */
  capturedAt: number;
  /** The clip's size: a renewed reference has it. */
  width: number;
  height: number;
  /** Where the worker writes the clip's quietest frame when the check returns 0, and the reference it then becomes. */
  refresh: { id: string; file: string; slot: number; minuteOfDay: number } | null;
}

interface PendingRow {
  job_id: string;
  camera: string;
  captured_at: number | string;
  width: number | string;
  height: number | string;
  refresh_id: string | null;
  refresh_file: string | null;
  refresh_slot: number | string | null;
  refresh_minute_of_day: number | string | null;
}

export async function insertPendingCheck(tx: Tx, p: PendingCheck): Promise<void> {
  await tx.run(
    `INSERT INTO camera_pending_checks (job_id, camera, captured_at, width, height, refresh_id, refresh_file, refresh_slot, refresh_minute_of_day)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    p.jobId,
    p.camera,
    p.capturedAt,
    p.width,
    p.height,
    p.refresh?.id ?? null,
    p.refresh?.file ?? null,
    p.refresh?.slot ?? null,
    p.refresh ? Math.floor(p.refresh.minuteOfDay) : null,
  );
}

/** The pending check of a job, removed as it is read (its outcome is being recorded); null for a job that checks no camera. */
export async function takePendingCheck(tx: Tx, jobId: string): Promise<PendingCheck | null> {
  const row = await tx.get<PendingRow>('SELECT * FROM camera_pending_checks WHERE job_id = ?', jobId);
  if (!row) return null;
  await tx.run('DELETE FROM camera_pending_checks WHERE job_id = ?', jobId);
  return {
    jobId: row.job_id,
    camera: row.camera,
    capturedAt: Number(row.captured_at),
    width: Number(row.width),
    height: Number(row.height),
    refresh:
      row.refresh_id && row.refresh_file
        ? { id: row.refresh_id, file: row.refresh_file, slot: Number(row.refresh_slot), minuteOfDay: Number(row.refresh_minute_of_day) }
        : null,
  };
}

/** Record retention deletes these jobs: their checks go from the cameras' histories (the cameras and references stay). */
export async function forgetChecksOfJobs(tx: Tx, jobIds: string[]): Promise<void> {
  const marks = jobIds.map(() => '?').join(', ');
  await tx.run(`DELETE FROM camera_checks WHERE job_id IN (${marks})`, ...jobIds);
  await tx.run(`DELETE FROM camera_pending_checks WHERE job_id IN (${marks})`, ...jobIds);
}
