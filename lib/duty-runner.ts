// The modules' periodic duties (retention of records and files, expired sessions, the webhook
// outbox), run by one runner: each duty has a name and an interval, runs on one node at a time
// (Database.exclusive: the others skip their turn), never twice at once on this node, is logged
// and counted in /metrics, and stops cleanly: a stop tells a run under way to end at its next
// step (its AbortSignal) and waits for it.
import type { Logger } from 'pino';
import { DatabaseUnavailableError } from './db/errors.js';

export interface Duty {
  /** `<module>.<what>`, e.g. `jobs.retention`: its lock among nodes, its log lines and its metrics' label. */
  readonly name: string;
  readonly intervalMs: number;
  /** Runs once at start as well, not only after its first interval. */
  readonly atStart?: boolean;
  /**
   * Does the work; a long duty checks `signal` between its steps (the service is stopping).
   * Resolves with counts of what it did, for the log.
   */
  run(signal: AbortSignal): Promise<Record<string, number> | void>;
}

export type DutyOutcome = 'done' | 'failed';

export interface DutyRunnerOptions {
  duties: Duty[];
  /** Runs `task` unless another node runs a task of that name now (Database.exclusive). */
  exclusive(name: string, task: () => Promise<void>): Promise<boolean>;
  logger: Logger;
  metrics?: { observeDuty(name: string, outcome: DutyOutcome, seconds: number): void };
}

/** What a run of a duty did: null when another node had its turn. */
export type DutyRun = Record<string, number> | null;

export class DutyRunner {
  private readonly duties = new Map<string, Duty>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Map<string, Promise<DutyRun>>();
  private readonly stopping = new AbortController();

  constructor(private readonly o: DutyRunnerOptions) {
    for (const duty of o.duties) {
      if (this.duties.has(duty.name)) throw new Error(`two duties are named ${duty.name}`);
      this.duties.set(duty.name, duty);
    }
  }

  get names(): string[] {
    return [...this.duties.keys()];
  }

  start(): void {
    for (const duty of this.duties.values()) {
      const turn = () => void this.run(duty.name).catch(() => {}); // logged and counted in run()
      if (duty.atStart) turn();
      const timer = setInterval(turn, duty.intervalMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  /**
   * Runs a duty now (also what its timer calls); a call while it runs joins that run. Resolves
   * with what it did, or null when another node ran it; rejects with its error.
   */
  run(name: string): Promise<DutyRun> {
    const duty = this.duties.get(name);
    if (!duty) return Promise.reject(new Error(`no duty ${name}`));
    const under = this.running.get(name);
    if (under) return under;
    if (this.stopping.signal.aborted) return Promise.resolve(null);
    const run = this.runOnce(duty).finally(() => this.running.delete(name));
    this.running.set(name, run);
    return run;
  }

  /** Stops the timers, tells runs under way to stop, and waits for them. */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.stopping.abort();
    await Promise.allSettled(this.running.values());
  }

  private async runOnce(duty: Duty): Promise<DutyRun> {
    const { logger, metrics } = this.o;
    const started = performance.now();
    let done: Record<string, number> = {};
    try {
      const ran = await this.o.exclusive(duty.name, async () => {
        done = (await duty.run(this.stopping.signal)) ?? {};
      });
      if (!ran) {
        logger.debug({ duty: duty.name }, 'duty skipped: another node runs it now');
        return null;
      }
    } catch (err) {
      const seconds = (performance.now() - started) / 1000;
      metrics?.observeDuty(duty.name, 'failed', seconds);
      if (err instanceof DatabaseUnavailableError) logger.warn({ duty: duty.name, err: err.message }, 'duty failed: the database does not answer; it runs again at its next turn');
      else logger.error({ err, duty: duty.name }, 'duty failed');
      throw err;
    }
    const seconds = (performance.now() - started) / 1000;
    metrics?.observeDuty(duty.name, 'done', seconds);
    logger.debug({ duty: duty.name, ms: Math.round(seconds * 1000), ...done }, 'duty ran');
    return done;
  }
}
