// The private PostgreSQL server of testkit/postgres.ts, which the PostgreSQL backend's tests,
// the benches and the cluster demo stand on: reachable only with its URL's password, and
// keeping its data through a crash and a restart.
import fs from 'node:fs';
import { expect } from 'chai';
import pg from 'pg';
import { startPostgres, type PrivatePostgres } from '../testkit/postgres.js';

/** Runs one statement on a connection of its own, closed again whatever happens. */
async function query(url: string, sql: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  // A server going down mid-connection is reported here rather than as an uncaught 'error' event.
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

/** The error a connection attempt fails with. */
async function connectError(url: string): Promise<any> {
  try {
    await query(url, 'SELECT 1');
  } catch (err) {
    return err;
  }
  throw new Error(`connected to ${url}`);
}

describe('private PostgreSQL server (testkit)', function () {
  this.timeout(60_000);
  let server: PrivatePostgres;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.stop();
  });

  it('hands out a DATABASE_URL for user and database vaa on 127.0.0.1 that accepts queries', async () => {
    const url = new URL(server.url);
    expect(url.protocol).to.equal('postgres:');
    expect(url.username).to.equal('vaa');
    expect(url.hostname).to.equal('127.0.0.1');
    expect(Number(url.port)).to.equal(server.port);
    expect(url.pathname).to.equal('/vaa');
    const { rows } = await query(
      server.url,
      "SELECT current_user AS who, current_database() AS db, current_setting('listen_addresses') AS listen, current_setting('max_connections') AS max",
    );
    expect(rows[0]).to.deep.equal({ who: 'vaa', db: 'vaa', listen: '127.0.0.1', max: '300' });
  });

  it('refuses a wrong password', async () => {
    const url = new URL(server.url);
    url.password = 'not-the-password';
    const err = await connectError(url.href);
    // 28P01: invalid_password.
    expect(err.code).to.equal('28P01');
  });

  it('keeps committed data through kill() and start(), and through restart()', async () => {
    await query(server.url, 'CREATE TABLE marks (n integer PRIMARY KEY)');
    await query(server.url, 'INSERT INTO marks VALUES (1)');

    await server.kill();
    const down = await connectError(server.url);
    expect(down.code).to.equal('ECONNREFUSED');
    await server.start();
    await query(server.url, 'INSERT INTO marks VALUES (2)');

    const port = server.port;
    await server.restart();
    expect(server.port).to.equal(port);
    const { rows } = await query(server.url, 'SELECT n FROM marks ORDER BY n');
    expect(rows.map((r) => r.n)).to.deep.equal([1, 2]);
  });

  it('runs beside another one, and stop() removes the other one and its folder', async () => {
    const other = await startPostgres();
    expect(other.port).to.not.equal(server.port);
    expect(other.url).to.not.equal(server.url);
    expect((await query(other.url, 'SELECT 1 AS one')).rows[0].one).to.equal(1);
    expect(fs.existsSync(other.dataDir)).to.equal(true);

    await other.stop();
    expect(fs.existsSync(other.dataDir)).to.equal(false);
    expect(fs.existsSync(other.logFile)).to.equal(false);
    expect((await connectError(other.url)).code).to.equal('ECONNREFUSED');
    // Idempotent; the first server is untouched.
    await other.stop();
    expect((await query(server.url, 'SELECT count(*)::int AS n FROM marks')).rows[0].n).to.equal(2);
  });
});
