// Every statement of the cameras module (its tables and their migrations are in schema.ts): a
// camera's alarm state, its references per time-of-day slot, its last checks, its state changes
// and the checks on their way. Reference pictures are files under DATA_DIR/references
// (reference-files.ts); rows name them. Writes that go with another module's (a job's outcome, a
// check's job) take that module's transaction.
import type { Database, Tx } from '../db/database.js';
import type { SourceStore } from '../sources/source-store.js';
import {
  cameraFromRow,
  checkFromRow,
  historyFromRow,
  pendingFromRow,
  referenceFromRow,
  stateChangeFromRow,
  type CameraRecord,
  type CameraRow,
  type CameraState,
  type CheckRecord,
  type CheckRow,
  type HistoryEntry,
  type HistoryRow,
  type PendingCheck,
  type PendingRow,
  type ReferenceRecord,
  type ReferenceRow,
  type StateChange,
  type StateChangeRow,
} from './camera-records.js';
import { settingsColumn, settingsFromColumn, type CameraSettings } from './camera-settings.js';
import { AUTOMATIC_ORIGINS, chooseAmong, newestPerSlot, olderInSlot, type Choice } from './reference-choice.js';

/** References kept per slot: the newest is used, the older ones are for audit. */
export const REFERENCES_PER_SLOT = 3;
/** Checks kept per camera (GET /cameras/<camera>). */
export const CHECKS_KEPT = 50;
/** State changes kept per camera (GET /cameras/<camera>/state_changes). */
export const STATE_CHANGES_KEPT = 100;
/** Entries of settings, acknowledgements and resets kept per camera (GET /cameras/<camera>/history). */
export const HISTORY_KEPT = 200;

const CAMERA_COLUMNS = `c.*, (SELECT COUNT(*) FROM camera_references r WHERE r.camera = c.id) AS reference_count`;

export type ReferenceChoice = Choice<ReferenceRecord>;

export class CameraStore {
  constructor(
    private readonly db: Database,
    /** A camera forgotten takes its stream source with it. */
    private readonly sources: SourceStore,
  ) {}

  /**
   * A transaction for a change of the cameras module together with the modules it calls (a
   * camera's record and its stream source); the body may only await `tx`.
   */
  transaction<T>(body: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(body);
  }

  /** A camera is on record from its first reference (or its stream source) on. */
  async ensure(tx: Tx, id: string, at: number): Promise<void> {
    await tx.run(`INSERT INTO cameras (id, state, state_since, streak, created_at) VALUES (?, 'ok', ?, 0, ?) ON CONFLICT (id) DO NOTHING`, id, at, at);
  }

  async list(): Promise<CameraRecord[]> {
    const rows = await this.db.sql.all<CameraRow>(`SELECT ${CAMERA_COLUMNS} FROM cameras c ORDER BY c.id`);
    return rows.map(cameraFromRow);
  }

  async get(id: string): Promise<CameraRecord | null> {
    const row = await this.db.sql.get<CameraRow>(`SELECT ${CAMERA_COLUMNS} FROM cameras c WHERE c.id = ?`, id);
    return row ? cameraFromRow(row) : null;
  }

  /**
   * The camera's row, locked until the transaction ends (PostgreSQL; SQLite writes one transaction
   * at a time): checks of one camera that finish together count in turn. Null when there is none.
   */
  async lock(tx: Tx, id: string): Promise<CameraRecord | null> {
    if ((await tx.run('UPDATE cameras SET streak = streak WHERE id = ?', id)) === 0) return null;
    return cameraFromRow((await tx.get<CameraRow>(`SELECT ${CAMERA_COLUMNS} FROM cameras c WHERE c.id = ?`, id))!);
  }

  /** Writes a camera's state, last check, acknowledgement and held alarm (as lock() read them, changed); its settings are putSettings()'s. */
  async update(tx: Tx, c: CameraRecord): Promise<void> {
    const ack = c.acknowledgement;
    await tx.run(
      `UPDATE cameras SET state = ?, state_since = ?, streak = ?, last_check_at = ?, last_job_id = ?, last_probability = ?, checks_state = ?, offline_reason = ?,
         acknowledged_at = ?, acknowledged_by = ?, acknowledge_comment = ?, alarm_held = ? WHERE id = ?`,
      c.state,
      c.stateSince,
      c.streak,
      c.lastCheckAt,
      c.lastJobId,
      c.lastProbability,
      c.state === 'offline' ? c.checksState : null,
      c.state === 'offline' ? c.offlineReason : null,
      ack?.at ?? null,
      ack?.by ?? null,
      ack?.comment ?? null,
      c.alarmHeld ? 1 : 0,
      c.id,
    );
  }

  /** A camera's settings alone (every check reads them), the defaults for a camera not on record. */
  async settingsOf(id: string): Promise<CameraSettings> {
    const row = await this.db.sql.get<{ settings: string | null }>('SELECT settings FROM cameras WHERE id = ?', id);
    return settingsFromColumn(row?.settings);
  }

  /** Writes a camera's settings (the row locked by lock()). */
  async putSettings(tx: Tx, camera: string, settings: CameraSettings): Promise<void> {
    await tx.run('UPDATE cameras SET settings = ? WHERE id = ?', settingsColumn(settings), camera);
  }

  /** Cameras whose alarm is held back until they are armed (alarm-workflow.ts). */
  async withHeldAlarms(): Promise<CameraRecord[]> {
    const rows = await this.db.sql.all<CameraRow>(`SELECT ${CAMERA_COLUMNS} FROM cameras c WHERE c.alarm_held = 1 ORDER BY c.id`);
    return rows.map(cameraFromRow);
  }

  /** Adds to the camera's history and keeps its newest HISTORY_KEPT. */
  async recordHistory(tx: Tx, camera: string, entry: HistoryEntry): Promise<void> {
    await tx.run(
      'INSERT INTO camera_history (camera, at, kind, actor, detail) VALUES (?, ?, ?, ?, ?)',
      camera,
      entry.at,
      entry.kind,
      entry.actor,
      JSON.stringify(entry.detail),
    );
    await keepNewest(tx, 'camera_history', camera, HISTORY_KEPT);
  }

  /** The camera's history of settings, acknowledgements and resets, newest first. */
  async history(camera: string, limit = HISTORY_KEPT): Promise<HistoryEntry[]> {
    const rows = await this.db.sql.all<HistoryRow>(
      `SELECT at, kind, actor, detail FROM camera_history WHERE camera = ? ORDER BY seq DESC LIMIT ${Math.floor(limit)}`,
      camera,
    );
    return rows.map(historyFromRow);
  }

  /** Cameras by alarm state (metrics). */
  async stateCounts(): Promise<{ state: CameraState; count: number }[]> {
    return this.db.sql.all<{ state: CameraState; count: number }>('SELECT state, COUNT(*) AS count FROM cameras GROUP BY state');
  }

  /** Forgets a camera: its state, references, checks, stream source and state changes. False when there was none. */
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const found = (await tx.run('DELETE FROM cameras WHERE id = ?', id)) === 1;
      await tx.run('DELETE FROM camera_references WHERE camera = ?', id);
      await tx.run('DELETE FROM camera_checks WHERE camera = ?', id);
      await tx.run('DELETE FROM camera_state_changes WHERE camera = ?', id);
      await tx.run('DELETE FROM camera_history WHERE camera = ?', id);
      await this.sources.remove(tx, id);
      return found;
    });
  }

  /** Records a reference and keeps the newest REFERENCES_PER_SLOT of its slot. */
  async insertReference(tx: Tx, ref: ReferenceRecord): Promise<void> {
    await this.ensure(tx, ref.camera, ref.createdAt);
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

  /** A reference on its own (set by hand, or from a capture). */
  addReference(ref: ReferenceRecord): Promise<void> {
    return this.db.transaction((tx) => this.insertReference(tx, ref));
  }

  /** Every reference of a camera (of every camera for null), by slot, newest first within a slot. */
  async references(camera: string | null): Promise<ReferenceRecord[]> {
    const rows =
      camera === null
        ? await this.db.sql.all<ReferenceRow>('SELECT * FROM camera_references ORDER BY camera, slot, seq DESC')
        : await this.db.sql.all<ReferenceRow>('SELECT * FROM camera_references WHERE camera = ? ORDER BY slot, seq DESC', camera);
    return rows.map(referenceFromRow);
  }

  /** The references of these cameras (a page of the camera list), by camera, slot and newest first. */
  async referencesOf(cameras: string[]): Promise<ReferenceRecord[]> {
    if (cameras.length === 0) return [];
    const rows = await this.db.sql.all<ReferenceRow>(
      `SELECT * FROM camera_references WHERE camera IN (${cameras.map(() => '?').join(', ')}) ORDER BY camera, slot, seq DESC`,
      ...cameras,
    );
    return rows.map(referenceFromRow);
  }

  async reference(camera: string, id: string): Promise<ReferenceRecord | null> {
    const row = await this.db.sql.get<ReferenceRow>('SELECT * FROM camera_references WHERE camera = ? AND id = ?', camera, id);
    return row ? referenceFromRow(row) : null;
  }

  /** The reference a check without an image uses (reference-choice.ts). */
  async chooseReference(camera: string, minuteOfDay: number, width: number, height: number): Promise<ReferenceChoice & { older?: ReferenceRecord }> {
    const refs = await this.references(camera);
    const choice = chooseAmong(newestPerSlot(refs), minuteOfDay, width, height);
    const older = 'found' in choice ? olderInSlot(refs, choice.found) : null;
    return older ? { ...choice, older } : choice;
  }

  /**
   * Takes a reference the appliance made itself out of its slot (a check's second opinion found it
   * kept something passing: lib/cameras/check-setup.ts): the slot's older one is its newest again.
   * Its file stays until the sweep. False when it is gone already, or was not made by the appliance.
   */
  async setAsideReference(tx: Tx, camera: string, id: string): Promise<boolean> {
    const origins = AUTOMATIC_ORIGINS.map(() => '?').join(', ');
    return (await tx.run(`DELETE FROM camera_references WHERE camera = ? AND id = ? AND origin IN (${origins})`, camera, id, ...AUTOMATIC_ORIGINS)) > 0;
  }

  /** The reference files rows name (the sweep of unlisted files, reference-files.ts). */
  async listedReferenceFiles(): Promise<Set<string>> {
    return new Set((await this.db.sql.all<{ file: string }>('SELECT file FROM camera_references')).map((r) => r.file));
  }

  /** Adds a check to the camera's history and keeps its newest CHECKS_KEPT. */
  async recordCheck(tx: Tx, camera: string, check: CheckRecord): Promise<void> {
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
    await keepNewest(tx, 'camera_checks', camera, CHECKS_KEPT);
  }

  /** The camera's last checks, newest first. */
  async checks(camera: string, limit = CHECKS_KEPT): Promise<CheckRecord[]> {
    const rows = await this.db.sql.all<CheckRow>(`SELECT * FROM camera_checks WHERE camera = ? ORDER BY seq DESC LIMIT ${Math.floor(limit)}`, camera);
    return rows.map(checkFromRow);
  }

  /** Records a change of state and keeps the camera's newest STATE_CHANGES_KEPT. */
  async recordStateChange(tx: Tx, camera: string, change: StateChange): Promise<void> {
    await tx.run(
      'INSERT INTO camera_state_changes (camera, from_state, to_state, at, job_id, reason) VALUES (?, ?, ?, ?, ?, ?)',
      camera,
      change.from,
      change.to,
      change.at,
      change.jobId,
      change.reason,
    );
    await keepNewest(tx, 'camera_state_changes', camera, STATE_CHANGES_KEPT);
  }

  /** The camera's state changes, newest first. */
  async stateChanges(camera: string, limit = STATE_CHANGES_KEPT): Promise<StateChange[]> {
    const rows = await this.db.sql.all<StateChangeRow>(
      `SELECT from_state, to_state, at, job_id, reason FROM camera_state_changes WHERE camera = ? ORDER BY seq DESC LIMIT ${Math.floor(limit)}`,
      camera,
    );
    return rows.map(stateChangeFromRow);
  }

  /** Written in the transaction of the check's job (JobStore.insert's `alongside`). */
  async insertPendingCheck(tx: Tx, p: PendingCheck): Promise<void> {
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
      p.capture?.file ?? p.snapshot ?? null,
    );
  }

  /** The pending check of a job, removed as it is read (its outcome is being recorded); null for a job that checks no camera. */
  async takePendingCheck(tx: Tx, jobId: string): Promise<PendingCheck | null> {
    const row = await tx.get<PendingRow>('SELECT * FROM camera_pending_checks WHERE job_id = ?', jobId);
    if (!row) return null;
    await tx.run('DELETE FROM camera_pending_checks WHERE job_id = ?', jobId);
    return pendingFromRow(row);
  }

  /** Record retention deletes these jobs (JobStore.onPurge): their checks go from the cameras' histories (the cameras and references stay). */
  async forgetChecksOfJobs(tx: Tx, jobIds: string[]): Promise<void> {
    const marks = jobIds.map(() => '?').join(', ');
    await tx.run(`DELETE FROM camera_checks WHERE job_id IN (${marks})`, ...jobIds);
    await tx.run(`DELETE FROM camera_pending_checks WHERE job_id IN (${marks})`, ...jobIds);
  }
}

/** Keeps a camera's newest `kept` rows of one of its histories (checks, state changes, history). */
async function keepNewest(tx: Tx, table: 'camera_checks' | 'camera_state_changes' | 'camera_history', camera: string, kept: number): Promise<void> {
  await tx.run(`DELETE FROM ${table} WHERE camera = ? AND seq NOT IN (SELECT seq FROM ${table} WHERE camera = ? ORDER BY seq DESC LIMIT ${kept})`, camera, camera);
}
