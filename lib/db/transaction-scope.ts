// Which transaction, if any, the current chain of async calls runs inside. Both backends mark a
// transaction body's calls with it, so that what such a body must not do is refused rather than
// done wrong: a statement on `db.sql` or a nested transaction (which on SQLite would wait for the
// transaction it runs in, forever, and on PostgreSQL would run on another connection, outside the
// transaction and behind its locks). A notification sent from a body waits for the commit: no
// node hears of a write that may still roll back.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Tx } from './database.js';

/** A programming error: a transaction body used the database other than through its own `tx`. */
export class TransactionMisuseError extends Error {
  readonly code = 'transaction_misuse';
}

interface OpenTransaction {
  /** Set once it has committed or rolled back: timers a body started no longer belong to it. */
  ended: boolean;
  /** Notifications sent from the body, sent once it commits. */
  readonly afterCommit: (() => unknown)[];
}

export class TransactionScope {
  private readonly storage = new AsyncLocalStorage<OpenTransaction>();

  /**
   * Runs `body` as a transaction's body; `commit` and `rollback` end it. Resolves with the body's
   * value once it has committed and the notifications the body sent have been sent, in order.
   */
  async run<T>(body: () => Promise<T>, end: { commit(): Promise<void> | void; rollback(): Promise<void> | void }): Promise<T> {
    const open: OpenTransaction = { ended: false, afterCommit: [] };
    let value: T;
    try {
      value = await this.storage.run(open, body);
      await end.commit();
    } catch (err) {
      open.ended = true;
      await end.rollback();
      throw err;
    }
    open.ended = true;
    for (const send of open.afterCommit) await send();
    return value;
  }

  /** Throws when called from inside an open transaction's body: `what` is what the body tried. */
  assertOutside(what: string): void {
    const open = this.storage.getStore();
    if (open && !open.ended) {
      throw new TransactionMisuseError(`${what} inside a transaction body: a body may only use the tx it was given`);
    }
  }

  /** Sends at once outside a transaction body, after the commit inside one (never after a rollback). */
  afterCommit(send: () => unknown): void {
    const open = this.storage.getStore();
    if (open && !open.ended) open.afterCommit.push(send);
    else send();
  }
}

/**
 * A transaction body's `tx`, refused once the transaction has ended: a body that let its tx
 * escape (a timer, a promise left running) must not run statements on a connection that is no
 * longer its transaction's.
 */
export function bodyTx(statements: Tx): { tx: Tx; end(): void } {
  let ended = false;
  const guard = <R>(run: () => Promise<R>): Promise<R> =>
    ended ? Promise.reject(new TransactionMisuseError('a statement on the tx of a transaction that has ended')) : run();
  return {
    tx: {
      all: <R>(sql: string, ...params: unknown[]) => guard(() => statements.all<R>(sql, ...params)),
      get: <R>(sql: string, ...params: unknown[]) => guard(() => statements.get<R>(sql, ...params)),
      run: (sql: string, ...params: unknown[]) => guard(() => statements.run(sql, ...params)),
      exec: (sql: string) => guard(() => statements.exec(sql)),
    },
    end: () => {
      ended = true;
    },
  };
}
