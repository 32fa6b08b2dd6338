// `make bench`: a burst of submissions on 200 connections (autocannon) while other connections
// poll with GETs, against the service in its own process (WORKERS=2, as deployed on 2 cores).
// Reports accepted / rejected (503) / completed per analytic (accepted must equal completed:
// nothing lost; each job run once), GET latency p50/p99 under the load, and the peak RSS of the
// service and of its worker processes; load-burst.ts has the details. Exits 1 when a job was lost,
// duplicated or failed. bench-cluster-load.ts runs the same burst against three nodes.
//
// Options: --connections N (200) --submissions N (400 POSTs in all) --queue-limit N (150)
//          --pollers N (8 GET connections) --poll-rate N (200 GETs/s in all)
//          --face-log-weight N (1 face log for every 3 tamper checks; 0 leaves face logs out)
//          --backend sqlite|postgres (sqlite; postgres starts a private server)
//          --workers N[,N...] (2: one node; a list gives each node's workers: --workers 1,1,0
//          --backend postgres is three nodes on one PostgreSQL and one DATA_DIR)
import { startDeployment, type Backend } from './bench-deployment.js';
import { loadEnv, loadOptions, printLoadReport, runLoad } from './load-burst.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const o = loadOptions(args);
  const get = (name: string, fallback: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const backend = get('backend', 'sqlite') as Backend;
  if (backend !== 'sqlite' && backend !== 'postgres') throw new Error(`--backend: sqlite or postgres, not ${backend}`);
  const workers = get('workers', '2').split(',').map(Number);
  const deployment = await startDeployment({ backend, workers, env: loadEnv(o) });
  try {
    if (printLoadReport(await runLoad(deployment, o), o)) process.exitCode = 1;
  } finally {
    await deployment.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
