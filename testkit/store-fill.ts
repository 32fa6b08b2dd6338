// A job store filled straight in the database as a long-running service would have filled it:
// finished tamper checks and face logs with their input, result and message, counted in
// job_totals, and a fleet of cameras with a reference and their last checks each. For benchmarks
// of the store at its bound (scripts/bench-store.ts); the SQL is written once for both backends,
// but for a series of row numbers and random ids.
import type { Database, Tx } from '../lib/db/database.js';
import { CHECKS_KEPT } from '../lib/cameras/camera-store.js';

/** Cameras of the fleet: each has a reference and CHECKS_KEPT checks. */
export const CAMERAS = 1000;
/** One job in 20 is a face log, the rest tamper checks. */
export const FACE_LOG_EVERY = 20;
/** Job rows per INSERT (a transaction each): keeps SQLite's WAL and PostgreSQL's statements bounded. */
const FILL_CHUNK = 100_000;
/** Placeholders per multi-row INSERT: below SQLite's limit (32766) and PostgreSQL's (65535). */
const INSERT_PARAMS = 4000;
/** A filled job waited this long in the queue and ran this long (ms), plus its probability. */
const QUEUED_MS = 40;
const RUN_MS = 150;
/** A check's clip was captured this long before it was uploaded. */
const CAPTURE_LEAD_MS = 3000;
/** What the fill writes where the service writes DATA_DIR and its node's name. */
const DATA_DIR_SHOWN = '/var/lib/vaa';
const NODE = 'vaa-1:8080';

/** Where the fill's SQL differs: a series n(i) of row numbers, and 32 random hex digits per row. */
const FILL_SQL: Record<Database['backend'], { series: (from: number, to: number) => string; randomHex: string }> = {
  sqlite: {
    series: (from, to) => `RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to})`,
    randomHex: 'lower(hex(randomblob(16)))',
  },
  postgres: {
    series: (from, to) => `n(i) AS (SELECT generate_series(${from}::bigint, ${to}::bigint))`,
    randomHex: `replace(gen_random_uuid()::text, '-', '')`,
  },
};

/** Rows firstRow.. firstRow + rows - 1, their creation spread evenly over [startMs, startMs + spanMs). */
export interface FillWindow {
  firstRow: number;
  rows: number;
  startMs: number;
  spanMs: number;
}

const uuid = (h: string) => [[1, 8], [9, 4], [13, 4], [17, 4], [21, 12]].map(([at, n]) => `substr(${h}, ${at}, ${n})`).join(` || '-' || `);
export const cameraId = (c: number) => `cam-${String(c).padStart(4, '0')}`;
/** Camera c's reference; the fill's tamper checks of row i read that of camera i % CAMERAS. */
const referenceId = (c: number) => `5e7f0000-0000-4000-8000-${String(c).padStart(12, '0')}`;

async function insertJobs(tx: Tx, backend: Database['backend'], from: number, to: number, w: FillWindow): Promise<void> {
  const f = FILL_SQL[backend];
  const d = DATA_DIR_SHOWN;
  const kamcheckInput = `'{"videoPath":"${d}/jobs/' || id || '/input/video","imagePath":"${d}/references/5e/' || ref || '.jpg","videoName":"clip-' || i || '.mp4",'
    || '"imageName":"reference ' || ref || '","refreshPath":"${d}/references/' || substr(fresh, 1, 2) || '/' || fresh || '.jpg"}'`;
  const faceLogInput = `'{"jobId":"' || id || '","videoPath":"${d}/jobs/' || id || '/input/video","videoName":"entrance-' || i || '.mp4","resultsDir":"${d}/results/' || id || '",'
    || '"width":1280,"height":720,"fps":25,"frames":250,"still":false,"startFrame":0,"maxFrames":null,"minSize":40,"gender":true,"trackThumbnails":false}'`;
  const kamcheckResult = `'{"probability":' || p || ',"causes":{"blur":0,"moved":' || p || ',"masked":0,"exposure":0,"frozen":0,"black":0}}'`;
  const faceLogResult = `'{"frames":250,"frames_processed":250,"input_video":"entrance-' || i || '.mp4","resolution":"1280x720@25.0fps","number_of_sightings":2,'
    || '"results_video":"face_log_' || id || '.mp4","results_xml":"face_log_' || id || '.xml","sightings":[],"start_frame":0,"number_of_tracks":3,"number_of_faces":118}'`;
  // MATERIALIZED: each row's random id is drawn once, not once per mention. Probabilities: one
  // check in 97 at 50-99 (tampered), the others 0-6, as on a quiet fleet.
  await tx.run(
    `WITH ${f.series(from, to)},
       hex AS MATERIALIZED (SELECT i, ${f.randomHex} AS h, ${f.randomHex} AS r FROM n),
       j AS MATERIALIZED (
         SELECT i, ${uuid('h')} AS id, ${uuid('r')} AS fresh,
                '5e7f0000-0000-4000-8000-' || substr(CAST(${10 ** 12} + i % ${CAMERAS} AS TEXT), 2) AS ref,
                CASE WHEN i % ${FACE_LOG_EVERY} = 0 THEN 'face_log' ELSE 'kamcheck' END AS analytic,
                ${w.startMs} + ((i - ${w.firstRow}) * ${w.spanMs}) / ${w.rows} AS created,
                CASE WHEN i % 97 = 0 THEN 50 + i % 50 ELSE i % 7 END AS p
         FROM hex)
     INSERT INTO jobs (id, analytic, state, attempts, created_at, started_at, finished_at, message, input, result, report, lease_owner)
     SELECT id, analytic, 'done', 1, created, created + ${QUEUED_MS}, created + ${QUEUED_MS + RUN_MS} + p,
            CASE WHEN analytic = 'kamcheck' THEN 'Tampering probability ' || p || '%' ELSE 'Found 2 sightings, 3 tracks, 118 faces' END,
            CASE WHEN analytic = 'kamcheck' THEN ${kamcheckInput} ELSE ${faceLogInput} END,
            CASE WHEN analytic = 'kamcheck' THEN ${kamcheckResult} ELSE ${faceLogResult} END,
            CASE WHEN analytic = 'kamcheck' AND p = 0 THEN '{"renewedReference":true}' END,
            '${NODE}'
     FROM j ORDER BY i`,
  );
  // As the service counts finished jobs (metrics read the totals, retention walks their analytics).
  const faceLogs = Math.floor(to / FACE_LOG_EVERY) - Math.floor((from - 1) / FACE_LOG_EVERY);
  for (const [analytic, count] of [['kamcheck', to - from + 1 - faceLogs], ['face_log', faceLogs]] as const) {
    const upsert = `INSERT INTO job_totals (analytic, state, node, count) VALUES (?, 'done', ?, ?)
       ON CONFLICT (analytic, state, node) DO UPDATE SET count = job_totals.count + excluded.count`;
    await tx.run(upsert, analytic, NODE, count);
  }
}

export async function fillJobs(db: Database, w: FillWindow): Promise<void> {
  const last = w.firstRow + w.rows - 1;
  for (let from = w.firstRow; from <= last; from += FILL_CHUNK) {
    await db.transaction((tx) => insertJobs(tx, db.backend, from, Math.min(last, from + FILL_CHUNK - 1), w));
  }
}

async function insertRows(tx: Tx, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  const perStatement = Math.floor(INSERT_PARAMS / columns.length);
  for (let at = 0; at < rows.length; at += perStatement) {
    const chunk = rows.slice(at, at + perStatement);
    const marks = chunk.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
    await tx.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${marks}`, ...chunk.flat());
  }
}

/** 1000 cameras, a reference each (slot = hour of day), and 50 checks each of the newest tamper checks (reused round when there are fewer). */
export async function fillCameras(db: Database, startMs: number): Promise<void> {
  type Newest = { id: string; created_at: number | string; finished_at: number | string; result: string };
  const newest = await db.sql.all<Newest>(`SELECT id, created_at, finished_at, result FROM jobs WHERE analytic = 'kamcheck' ORDER BY seq DESC LIMIT ?`, CAMERAS * CHECKS_KEPT);
  const jobOf = (c: number, k: number) => newest[(k * CAMERAS + c) % newest.length];
  const checks: unknown[][] = [];
  for (let k = CHECKS_KEPT - 1; k >= 0; k--) {
    for (let c = 0; c < CAMERAS; c++) {
      const job = jobOf(c, k);
      checks.push([cameraId(c), job.id, Number(job.created_at) - CAPTURE_LEAD_MS, Number(job.finished_at), 1, JSON.parse(job.result).probability, 'ok']);
    }
  }
  const cameras = Array.from({ length: CAMERAS }, (_, c) => {
    const last = jobOf(c, 0);
    return [cameraId(c), 'ok', startMs, 0, startMs, Number(last.finished_at), last.id, JSON.parse(last.result).probability];
  });
  const references = Array.from({ length: CAMERAS }, (_, c) => {
    const slot = c % 24;
    return [referenceId(c), cameraId(c), slot, startMs, slot * 60, null, `references/5e/${referenceId(c)}.jpg`, 320, 240, startMs];
  });
  await db.transaction(async (tx) => {
    await insertRows(tx, 'cameras', ['id', 'state', 'state_since', 'streak', 'created_at', 'last_check_at', 'last_job_id', 'last_probability'], cameras);
    await insertRows(tx, 'camera_references', ['id', 'camera', 'slot', 'captured_at', 'minute_of_day', 'source_job', 'file', 'width', 'height', 'created_at'], references);
    await insertRows(tx, 'camera_checks', ['camera', 'job_id', 'captured_at', 'finished_at', 'success', 'probability', 'state'], checks);
  });
}
