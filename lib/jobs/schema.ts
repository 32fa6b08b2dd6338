// The jobs module's tables: the jobs themselves, totals of finished jobs per node (metrics read
// them instead of counting the table), and the idempotency keys of submissions.
import { ddl, type SchemaModule } from '../db/migrations.js';

export const jobsSchema: SchemaModule = {
  name: 'jobs',
  // SQLite's versions 1-2 and PostgreSQL's 1 (whose jobs table had every column of version 2).
  fromLegacy: (level) => Math.min(level, 2),
  steps: [
    ddl(
      (d) => `CREATE TABLE IF NOT EXISTS jobs (
         seq ${d.serial},
         id TEXT NOT NULL UNIQUE,
         analytic TEXT NOT NULL,
         state TEXT NOT NULL,
         attempts INTEGER NOT NULL DEFAULT 0,
         created_at ${d.bigint} NOT NULL,
         finished_at ${d.bigint},
         message TEXT NOT NULL,
         input TEXT NOT NULL,
         result TEXT,
         error TEXT
       );
       CREATE INDEX IF NOT EXISTS jobs_by_analytic ON jobs (analytic, seq DESC);
       CREATE INDEX IF NOT EXISTS jobs_unfinished ON jobs (state) WHERE state IN ('queued', 'processing');`,
    ),
    ddl(
      (d) => `ALTER TABLE jobs ADD COLUMN started_at ${d.bigint};
       ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
       ALTER TABLE jobs ADD COLUMN lease_until ${d.bigint};`,
    ),
    // Bounded records: retention walks the finished jobs by age (jobs_by_finish); metrics read
    // totals; the unfinished jobs are counted and claimed in seq order through one partial index.
    ddl(
      (d) => `ALTER TABLE jobs ADD COLUMN report TEXT;
       DROP INDEX jobs_unfinished;
       CREATE INDEX jobs_unfinished ON jobs (seq) WHERE state IN ('queued', 'processing');
       CREATE INDEX jobs_by_finish ON jobs (finished_at) WHERE finished_at IS NOT NULL;
       CREATE TABLE job_totals (
         analytic TEXT NOT NULL,
         state TEXT NOT NULL,
         node TEXT NOT NULL,
         count ${d.bigint} NOT NULL,
         PRIMARY KEY (analytic, state, node)
       );
       INSERT INTO job_totals (analytic, state, node, count)
         SELECT analytic, state, '', COUNT(*) FROM jobs WHERE state IN ('done', 'failed') GROUP BY analytic, state;
       CREATE TABLE job_idempotency_keys (
         owner TEXT NOT NULL,
         idempotency_key TEXT NOT NULL,
         job_id TEXT NOT NULL,
         created_at ${d.bigint} NOT NULL,
         PRIMARY KEY (owner, idempotency_key)
       );
       CREATE INDEX job_idempotency_keys_by_age ON job_idempotency_keys (created_at);`,
    ),
    // How far a running job is, as its worker counts it (frames done and in all): the task's `progress`.
    ddl(() => `ALTER TABLE jobs ADD COLUMN progress TEXT;`),
  ],
};
