// What the database layer (lib/db/) guarantees to chains of async calls that share it, on both
// backends: a statement of one chain never runs inside another chain's open transaction (so a
// rollback never undoes a write its caller was told had succeeded, and no chain reads a write
// that may still roll back); a notification sent from a transaction body is heard after the
// commit and never after a rollback; a body that uses the database other than through its own tx
// is refused rather than left to deadlock or to escape its transaction; and 64-bit integers come
// back as numbers, or not at all when a number cannot hold them.
import { expect } from 'chai';
import type { Database, DatabaseEvent } from '../lib/db/database.js';
import { TransactionMisuseError } from '../lib/db/transaction-scope.js';
import { removeTempDir, tempDataDir } from '../testkit/service.js';
import { describeBackends } from './helpers/backends.js';
import { rejection, sleep, until } from './helpers/until.js';

/** Reads a transaction body awaits before it fails: turns of the event loop for other chains. */
const READS_BEFORE_FAILING = 5;

describeBackends('database transactions', function (backend) {
  let dir: string;
  let db: Database;

  beforeEach(async () => {
    dir = tempDataDir();
    db = await backend.openDatabase(dir);
    await db.sql.exec('CREATE TABLE t (v TEXT NOT NULL)');
  });
  afterEach(async () => {
    await db.close();
    removeTempDir(dir);
  });

  const values = async () => (await db.sql.all<{ v: string }>('SELECT v FROM t ORDER BY v')).map((r) => r.v);

  /** Chain A of the issue: writes, reads a few times (awaiting), then fails and rolls back. */
  function failingTransaction(): Promise<unknown> {
    return db.transaction(async (tx) => {
      await tx.run(`INSERT INTO t (v) VALUES ('a')`);
      for (let i = 0; i < READS_BEFORE_FAILING; i++) await tx.get('SELECT COUNT(*) AS n FROM t');
      throw new Error('chain A fails');
    });
  }

  it("keeps a write acknowledged to one chain when another chain's transaction rolls back", async () => {
    const a = failingTransaction();
    // Chain B, started in the same tick, writes while A's body awaits between its statements.
    const b = (async () => {
      await null;
      await null;
      return db.sql.run(`INSERT INTO t (v) VALUES ('b')`);
    })();
    expect(await b).to.equal(1);
    expect((await rejection(a)).message).to.equal('chain A fails');
    expect(await values()).to.deep.equal(['b']);
  });

  it("never shows one chain another chain's write that rolls back", async () => {
    const a = failingTransaction();
    const seen = (async () => {
      await null;
      await null;
      return db.sql.all<{ v: string }>('SELECT v FROM t');
    })();
    expect(await seen).to.deep.equal([]);
    await rejection(a);
  });

  it('runs a statement of another chain after a committing transaction, on top of its write', async () => {
    const a = db.transaction(async (tx) => {
      await tx.run(`INSERT INTO t (v) VALUES ('a')`);
      for (let i = 0; i < READS_BEFORE_FAILING; i++) await tx.get('SELECT COUNT(*) AS n FROM t');
      await tx.run(`UPDATE t SET v = 'a2' WHERE v = 'a'`);
    });
    const b = (async () => {
      await null;
      return db.sql.run(`INSERT INTO t (v) VALUES ('b')`);
    })();
    await Promise.all([a, b]);
    expect(await values()).to.deep.equal(['a2', 'b']);
  });

  it('tells subscribers of a notification sent from a transaction body after its commit, and never after a rollback', async () => {
    const heard: { payload: string; rows: string[] }[] = [];
    const off = db.subscribe((event: DatabaseEvent) => {
      if (event.type !== 'notification') return;
      // What a listener reads when it hears: the committed write must be there.
      void values().then((rows) => heard.push({ payload: event.payload, rows }));
    });
    try {
      // PostgreSQL's listening connection opens beside the pool: heard once, it hears what follows.
      await until('a first notification', async () => {
        await db.notify('ready');
        await sleep(50);
        return heard.some((h) => h.payload === 'ready');
      });
      heard.length = 0;
      await rejection(
        db.transaction(async (tx) => {
          await tx.run(`INSERT INTO t (v) VALUES ('undone')`);
          await db.notify('rolled-back');
          throw new Error('rolls back');
        }),
      );
      await db.transaction(async (tx) => {
        await tx.run(`INSERT INTO t (v) VALUES ('kept')`);
        await db.notify('committed');
        for (let i = 0; i < READS_BEFORE_FAILING; i++) await tx.get('SELECT COUNT(*) AS n FROM t');
      });
      // A notification sent after both: when it is heard, an earlier one would have been too.
      await db.notify('marker');
      await until('the marker notification', () => heard.some((h) => h.payload === 'marker'));
      expect(heard.filter((h) => h.payload !== 'marker' && h.payload !== 'ready')).to.deep.equal([{ payload: 'committed', rows: ['kept'] }]);
    } finally {
      off();
    }
  });

  it('refuses a statement on db.sql or a nested transaction inside a transaction body', async () => {
    const outcome = await rejection(
      db.transaction(async (tx) => {
        await tx.run(`INSERT INTO t (v) VALUES ('a')`);
        const statement = await rejection(db.sql.run(`INSERT INTO t (v) VALUES ('b')`));
        const nested = await rejection(db.transaction(async () => {}));
        throw Object.assign(new Error('checked'), { statement, nested });
      }),
    );
    const { statement, nested } = outcome as Error & { statement: Error; nested: Error };
    expect(statement).to.be.instanceOf(TransactionMisuseError);
    expect(statement.message).to.match(/a statement on db\.sql inside a transaction body/);
    expect(nested).to.be.instanceOf(TransactionMisuseError);
    expect(await values()).to.deep.equal([]);
  });

  it("refuses a transaction's tx once the transaction has ended", async () => {
    let escaped: Parameters<Parameters<Database['transaction']>[0]>[0] | null = null;
    await db.transaction(async (tx) => {
      escaped = tx;
    });
    expect(await rejection(escaped!.run(`INSERT INTO t (v) VALUES ('late')`))).to.be.instanceOf(TransactionMisuseError);
    // A timer a body started is not inside the transaction any more once it has ended.
    const later = await new Promise<number>((resolve, reject) => {
      void db.transaction(async () => {
        setTimeout(() => db.sql.run(`INSERT INTO t (v) VALUES ('timer')`).then(resolve, reject), 20);
      });
    });
    expect(later).to.equal(1);
    expect(await values()).to.deep.equal(['timer']);
  });

  it('gives 64-bit integers back as numbers, and refuses one it cannot hold exactly', async () => {
    await db.sql.exec(`CREATE TABLE n (big ${db.dialect.bigint} NOT NULL)`);
    await db.sql.run('INSERT INTO n (big) VALUES (?)', Number.MAX_SAFE_INTEGER);
    expect(await db.sql.get('SELECT big, COUNT(*) AS count FROM n GROUP BY big')).to.deep.equal({ big: Number.MAX_SAFE_INTEGER, count: 1 });
    if (backend.name === 'postgres') {
      // One more than 2^53 - 1 would come back as 2^53: the query fails instead, and the pool goes on.
      const err = await rejection(db.sql.get(`SELECT big + 2 AS big FROM n`));
      expect(err.message).to.equal('a BIGINT from the database is beyond 2^53 and cannot be read exactly: 9007199254740993');
      expect(await db.sql.get('SELECT CAST(SUM(big) AS BIGINT) AS total FROM n')).to.deep.equal({ total: Number.MAX_SAFE_INTEGER });
    }
  });

  if (backend.name === 'sqlite') {
    it('runs a statement outside any transaction at once, before the next turn of the event loop', async () => {
      let next = false;
      setImmediate(() => (next = true));
      await db.sql.run(`INSERT INTO t (v) VALUES ('now')`);
      expect(next).to.equal(false);
    });
  }
});
