// What the appliance keeps about each camera (every statement of the cameras module; its tables
// and their migrations are in schema.ts): its alarm state, its references per time-of-day slot,
// its last checks, and the checks on their way. Reference pictures are files under
// DATA_DIR/references (reference-files.ts); rows name them.
import type { Database, Tx } from '../db/database.js';
import { chooseAmong, newestPerSlot, type Choice } from './reference-choice.js';

/** What the checks say of a camera. */
export type CheckState = 'ok' | 'tampered';
/** A camera's state: its checks', or `offline` while its stream cannot be read. */
export type CameraState = CheckState | 'offline';
/** Where a reference came from: set by hand or with a check, renewed by a check of 0, learned from a first capture, or an operator's re-baseline from a capture. */
export type ReferenceOrigin = 'uploaded' | 'renewed' | 'learned' | 'capture';

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
  /** The state the checks say: `state` itself unless the camera is offline. */
  checksState: CheckState;
  /** Why the stream cannot be read (source-failure reason) while offline, else null. */
  offlineReason: string | null;
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
  /** Null on references of releases that did not record it; absent in a new record means unknown. */
  origin?: ReferenceOrigin | null;
}

export interface CheckRecord {
  jobId: string;
  capturedAt: number;
  finishedAt: number;
  success: boolean;
  probability: number | null;
  /** The camera's state after this check. */
  state: CameraState;
  /** A check of the camera's stream: how long after its due time its capture started, ms; null for uploads. */
  latenessMs: number | null;
  /** A check of the camera's stream: from the start of its capture to the start of its analysis on a worker, ms. */
  waitMs?: number | null;
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
  checks_state: CheckState | null;
  offline_reason: string | null;
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
  origin: ReferenceOrigin | null;
}

interface CheckRow {
  job_id: string;
  captured_at: number | string;
  finished_at: number | string;
  success: number | string;
  probability: number | string | null;
  state: CameraState;
  lateness_ms: number | string | null;
  wait_ms: number | string | null;
}

export const nullable = (v: number | string | null | undefined) => (v === null || v === undefined ? null : Number(v));

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
    checksState: r.state === 'offline' ? (r.checks_state ?? 'ok') : r.state,
    offlineReason: r.state === 'offline' ? r.offline_reason : null,
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
    origin: r.origin ?? null,
  };
}

const CAMERA_COLUMNS = `c.*, (SELECT COUNT(*) FROM camera_references r WHERE r.camera = c.id) AS reference_count`;

/** A camera is on record from its first reference (or its stream source) on. */
export async function ensureCamera(tx: Tx, id: string, at: number): Promise<void> {
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
    `INSERT INTO camera_references (id, camera, slot, captured_at, minute_of_day, source_job, file, width, height, created_at, origin)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    ref.origin ?? null,
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
    `UPDATE cameras SET state = ?, state_since = ?, streak = ?, last_check_at = ?, last_job_id = ?, last_probability = ?, checks_state = ?, offline_reason = ? WHERE id = ?`,
    c.state,
    c.stateSince,
    c.streak,
    c.lastCheckAt,
    c.lastJobId,
    c.lastProbability,
    c.state === 'offline' ? c.checksState : null,
    c.state === 'offline' ? c.offlineReason : null,
    c.id,
  );
}

/** Adds a check to the camera's history and keeps its newest CHECKS_KEPT. */
export async function recordCheck(tx: Tx, camera: string, check: CheckRecord): Promise<void> {
  await tx.run(
    `INSERT INTO camera_checks (camera, job_id, captured_at, finished_at, success, probability, state, lateness_ms, wait_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    camera,
    check.jobId,
    check.capturedAt,
    check.finishedAt,
    check.success ? 1 : 0,
    check.probability,
    check.state,
    check.latenessMs === null ? null : Math.round(check.latenessMs),
    check.waitMs === null || check.waitMs === undefined ? null : Math.round(check.waitMs),
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

/** Every reference of a camera (of every camera for null), by slot, newest first within a slot. */
export async function cameraReferences(db: Database, camera: string | null): Promise<ReferenceRecord[]> {
  const rows =
    camera === null
      ? await db.sql.all<ReferenceRow>('SELECT * FROM camera_references ORDER BY camera, slot, seq DESC')
      : await db.sql.all<ReferenceRow>('SELECT * FROM camera_references WHERE camera = ? ORDER BY slot, seq DESC', camera);
  return rows.map(referenceFromRow);
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
    latenessMs: nullable(r.lateness_ms),
    waitMs: nullable(r.wait_ms),
  }));
}

/** Forgets a camera: its state, references, checks, source and state changes. False when there was none. */
export async function deleteCamera(db: Database, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const found = (await tx.run('DELETE FROM cameras WHERE id = ?', id)) === 1;
    await tx.run('DELETE FROM camera_references WHERE camera = ?', id);
    await tx.run('DELETE FROM camera_checks WHERE camera = ?', id);
    await tx.run('DELETE FROM camera_sources WHERE camera = ?', id);
    await tx.run('DELETE FROM camera_state_changes WHERE camera = ?', id);
    return found;
  });
}

/** State changes kept per camera (GET /cameras/<camera>/state_changes). */
export const STATE_CHANGES_KEPT = 100;

export interface StateChange {
  from: CameraState;
  to: CameraState;
  at: number;
  /** The check that made it; null for none (a source removed while offline). */
  jobId: string | null;
  /** A source-failure reason for a change to offline; null otherwise. */
  reason: string | null;
}

/** Records a change of state and keeps the camera's newest STATE_CHANGES_KEPT. */
export async function recordStateChange(tx: Tx, camera: string, change: StateChange): Promise<void> {
  await tx.run(
    'INSERT INTO camera_state_changes (camera, from_state, to_state, at, job_id, reason) VALUES (?, ?, ?, ?, ?, ?)',
    camera,
    change.from,
    change.to,
    change.at,
    change.jobId,
    change.reason,
  );
  await tx.run(
    `DELETE FROM camera_state_changes WHERE camera = ? AND seq NOT IN (SELECT seq FROM camera_state_changes WHERE camera = ? ORDER BY seq DESC LIMIT ${STATE_CHANGES_KEPT})`,
    camera,
    camera,
  );
}

/** The camera's state changes, newest first. */
export async function stateChanges(db: Database, camera: string, limit = STATE_CHANGES_KEPT): Promise<StateChange[]> {
  const rows = await db.sql.all<{ from_state: CameraState; to_state: CameraState; at: number | string; job_id: string | null; reason: string | null }>(
    `SELECT from_state, to_state, at, job_id, reason FROM camera_state_changes WHERE camera = ? ORDER BY seq DESC LIMIT ${Math.floor(limit)}`,
    camera,
  );
  return rows.map((r) => ({ from: r.from_state, to: r.to_state, at: Number(r.at), jobId: r.job_id, reason: r.reason }));
}

export type ReferenceChoice = Choice<ReferenceRecord>;

/** The reference a check without an image uses (reference-choice.ts). */
export async function chooseReference(db: Database, camera: string, minuteOfDay: number, width: number, height: number): Promise<ReferenceChoice> {
  return chooseAmong(newestPerSlot(await cameraReferences(db, camera)), minuteOfDay, width, height);
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
  /**
   * A check that reads the camera's stream: when it was due (now, for one asked for by hand) and
   * where its worker writes the capture's picture (relative to DATA_DIR). Null for uploads.
   */
  capture?: { dueAt: number; file: string } | null;
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
  due_at: number | string | null;
  capture_file: string | null;
}

export async function insertPendingCheck(tx: Tx, p: PendingCheck): Promise<void> {
  await tx.run(
    `INSERT INTO camera_pending_checks (job_id, camera, captured_at, width, height, refresh_id, refresh_file, refresh_slot, refresh_minute_of_day, due_at, capture_file)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    p.jobId,
    p.camera,
    p.capturedAt,
    p.width,
    p.height,
    p.refresh?.id ?? null,
    p.refresh?.file ?? null,
    p.refresh?.slot ?? null,
    p.refresh ? Math.floor(p.refresh.minuteOfDay) : null,
    p.capture?.dueAt ?? null,
    p.capture?.file ?? null,
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
    capture: row.due_at !== null && row.capture_file ? { dueAt: Number(row.due_at), file: row.capture_file } : null,
  };
}

/** Record retention deletes these jobs: their checks go from the cameras' histories (the cameras and references stay). */
export async function forgetChecksOfJobs(tx: Tx, jobIds: string[]): Promise<void> {
  const marks = jobIds.map(() => '?').join(', ');
  await tx.run(`DELETE FROM camera_checks WHERE job_id IN (${marks})`, ...jobIds);
  await tx.run(`DELETE FROM camera_pending_checks WHERE job_id IN (${marks})`, ...jobIds);
}
