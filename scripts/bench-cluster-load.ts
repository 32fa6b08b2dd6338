// `make bench`: several appliances as one, under load. The load bench's burst (load-burst.ts)
// three times in one run: against one box on SQLite (WORKERS=2, as deployed on 2 cores), against
// one node on a private PostgreSQL (durable settings, bench-deployment.ts; WORKERS=2), then
// spread over three nodes on one PostgreSQL and one shared DATA_DIR with WORKERS=1+1+0: the same
// two worker processes on the same two cores, so the comparison is of the job store and of the
// nodes' HTTP, not of more CPU; the third node is API-only and its jobs run on the other two. The
// middle run tells the store's share from that of three nodes on one machine. POST and GET
// connections are dealt to the nodes in turn. Ends with a table comparing the runs. Exits 1
// when a job was lost, run twice or failed in any.
//
// Options: those of bench-load.ts (but --backend), and --workers 1,1,0 (the cluster's workers
// per node).
import { describeSpec, startDeployment, type DeploymentSpec } from './bench-deployment.js';
import { loadEnv, loadOptions, printLoadReport, runLoad, type LoadReport } from './load-burst.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const o = loadOptions(args);
  const i = args.indexOf('--workers');
  const clusterWorkers = (i >= 0 ? args[i + 1] : '1,1,0').split(',').map(Number);
  const specs: DeploymentSpec[] = [
    { backend: 'sqlite', workers: [2], env: loadEnv(o) },
    { backend: 'postgres', workers: [2], env: loadEnv(o) },
    { backend: 'postgres', workers: clusterWorkers, env: loadEnv(o) },
  ];
  const reports: LoadReport[] = [];
  let failed = false;
  for (const spec of specs) {
    console.error(`load on ${describeSpec(spec)}`);
    const deployment = await startDeployment(spec);
    try {
      const report = await runLoad(deployment, o);
      failed = printLoadReport(report, o) || failed;
      reports.push(report);
    } finally {
      await deployment.stop();
    }
  }
  const MiB = 1024 * 1024;
  console.log(`\nThe same burst (${o.submissions} POSTs on ${o.connections} connections, QUEUE_LIMIT=${o.queueLimit}, ${o.pollRate} GETs/s) on each`);
  console.log('| deployment | accepted | rejected (503) | completed | lost | run twice | POST p50 / p99 ms | GET p99 ms: idle / burst / drain | all done after | peak RSS: node, worker |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of reports) {
    const sum = (f: (t: LoadReport['tallies'][number]) => number) => r.tallies.reduce((n, t) => n + f(t), 0);
    const getP99 = r.phases.map((p) => p.result.latency.p99).join(' / ');
    console.log(
      `| ${r.deployment} | ${sum((t) => t.accepted)} | ${sum((t) => t.rejected)} | ${sum((t) => t.completed)} | ${sum((t) => t.lost)} | ${sum((t) => t.runTwice)} | ` +
        `${r.burst.latency.p50} / ${r.burst.latency.p99} | ${getP99} | ${r.drainSeconds.toFixed(1)} s | ${(r.nodePeakRss / MiB).toFixed(0)}, ${(r.workerPeakRss / MiB).toFixed(0)} MiB |`,
    );
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
