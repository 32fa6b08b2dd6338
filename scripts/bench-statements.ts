// What the nodes ask of PostgreSQL, counted by the server: pg_stat_statements on a bench's private
// server (startBenchPostgres({ statementStats: true })), each statement of lib/jobs/pg-store.ts
// named by the store operation that sends it. The benches divide the counts by the jobs they ran
// (statements per job) or by node-seconds (what an idle node sends). Queries of the bench itself
// (BENCH_QUERY_TAG) are left out.
import { BENCH_QUERY_TAG, withClient } from './bench-deployment.js';

/**
 * The store operation each statement belongs to, told by its text (first match wins). The server
 * keeps a statement's text with its constants replaced by $n, so the patterns match the shape
 * around them: `state = 'done', error = NULL` is stored as `state = $6, error = $7`.
 */
const OPERATIONS: [string, RegExp][] = [
  ['insert', /INSERT INTO jobs/],
  ['claim', /FOR UPDATE SKIP LOCKED/],
  ['complete', /message = \$3, result = \$4, error = \$\d+, finished_at/],
  ['fail', /message = \$3, error = \$4, result = \$5/],
  ['requeue', /message = \$3, lease_owner = \$\d+, lease_until = \$\d+/],
  ['renew (lease)', /SET lease_until = \(extract/],
  ['progress message', /UPDATE jobs SET message = \$3 WHERE/],
  ['get (one job)', /SELECT \* FROM jobs WHERE id = \$1/],
  ['history page', /ORDER BY seq DESC LIMIT/],
  ['count unfinished (QUEUE_LIMIT)', /COUNT\(\*\) AS n FROM jobs/],
  ['counts by state (/metrics)', /GROUP BY analytic, state/],
  ['release leases (start)', /lease_owner = \$1 RETURNING/],
  ['ping (SELECT 1)', /^\s*SELECT (1|\$1)\s*$/],
];

export interface StatementCount {
  operation: string;
  calls: number;
  /** Server time, all calls. */
  totalMs: number;
}

export async function resetStatementStats(url: string): Promise<void> {
  await withClient(url, (c) => c.query(`${BENCH_QUERY_TAG} SELECT pg_stat_statements_reset()`));
}

/** Calls and server time per operation since the last reset, most called first; "other" gathers the rest (LISTEN, BEGIN, ...). */
export async function readStatementStats(url: string): Promise<StatementCount[]> {
  const { rows } = await withClient(url, (c) =>
    c.query<{ query: string; calls: string; total: number }>(
      `${BENCH_QUERY_TAG} SELECT query, calls, total_exec_time AS total FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    ),
  );
  const byOperation = new Map<string, StatementCount>();
  for (const row of rows) {
    if (row.query.includes(BENCH_QUERY_TAG)) continue;
    const operation = OPERATIONS.find(([, pattern]) => pattern.test(row.query))?.[0] ?? 'other';
    const count = byOperation.get(operation) ?? { operation, calls: 0, totalMs: 0 };
    count.calls += Number(row.calls);
    count.totalMs += row.total;
    byOperation.set(operation, count);
  }
  return [...byOperation.values()].sort((a, b) => b.calls - a.calls);
}
