/**
 * Upgrading a data directory of the PGlite era: `<dataDir>/pg` holds a PGlite cluster, beside
 * `secrets.json` and `media/`. The first start on the embedded PostgreSQL copies every row into
 * the new cluster (src/db/pglite-upgrade.ts), keeps the old directory, and a second start copies
 * nothing again.
 *
 * The old directory is made the way Roost made one: a real instance (on the run's server) gets
 * accounts, statuses, a follow, a media attachment and a queued job through its API and services;
 * its rows are then written into a new PGlite cluster brought to the current schema by Roost's
 * migrations, and its secrets and media files are copied beside it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import pg from 'pg';
import { startTestRoost, GENEROUS_RATE_LIMITS, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { enqueue } from '../../src/jobs/queue.ts';
import { copyRoostTables, openPgliteCluster, pgliteDirOf, sessionOfClient } from '../../src/db/pglite-upgrade.ts';
import { loadConfig } from '../../config/index.ts';
import { startRoost, type RunningRoost } from '../../src/main.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Per table: rows and a digest of their text, in a stable order. */
async function digest(client: pg.Client, tables: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of tables) {
    const { rows } = await client.query(`select count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as d from ${t} x`);
    out[t] = `${rows[0].n}:${rows[0].d}`;
  }
  return out;
}

const TABLES = ['accounts', 'users', 'statuses', 'follows', 'media_attachments', 'oauth_access_tokens', 'account_stats'];

describe('upgrading a PGlite data directory', () => {
  it('copies every row into the embedded PostgreSQL on the first start, keeps the old directory, and copies nothing the second time', async () => {
    const old: TestRoost = await startTestRoost();
    const alice = await createTestUser(old, 'alice');
    const bob = await createTestUser(old, 'bob');
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c04020' } }).png().toBuffer();
    const form = new FormData();
    form.append('file', new Blob([png], { type: 'image/png' }), 'a.png');
    form.append('description', 'a red square');
    const media = await alice.api('/api/v1/media', { method: 'POST', body: form });
    expect(media.status).toBe(200);
    const posted = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'from the PGlite days', media_ids: [media.body.id] } });
    expect(posted.status).toBe(200);
    expect((await bob.api(`/api/v1/accounts/${alice.account.id}/follow`, { method: 'POST' })).status).toBe(200);
    await settled(old);
    const queued = await enqueue(old.services.db.sql, { kind: 'test.later', payload: { n: 1 }, runAt: new Date(Date.now() + 86_400_000) });

    // The old data directory: secrets, media, and the rows in a PGlite cluster.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'roost-upgrade-'));
    dirs.push(dataDir);
    cpSync(old.dataDir, dataDir, { recursive: true });
    // A PGlite-era directory records no database (the test instance it was copied from ran on a server).
    rmSync(path.join(dataDir, 'database.json'), { force: true });
    const source = new pg.Client({ connectionString: old.config.databaseUrl! });
    await source.connect();
    const before = await digest(source, TABLES);
    const cluster = await openPgliteCluster(pgliteDirOf(dataDir));
    try {
      await source.query('begin transaction isolation level repeatable read read only');
      await cluster.session.query('begin');
      const copied = await copyRoostTables(sessionOfClient(source), cluster.session);
      await cluster.session.query('commit');
      await source.query('commit');
      expect(copied.statuses).toBe(1);
    } finally {
      await cluster.close();
      await source.end();
    }
    const domain = old.config.domain;
    await old.close();

    const config = loadConfig({
      env: {},
      overrides: { host: '127.0.0.1', port: 0, dataDir, domain, logLevel: 'silent', rateLimits: GENEROUS_RATE_LIMITS, federation: { allowPrivateAddresses: true } },
    });
    let roost: RunningRoost = await startRoost(config, { controlSocket: false });
    try {
      // (The instance keeps its old domain and port in its URLs; it listens on a new port.)
      const at = (p: string) => `http://127.0.0.1:${roost.port}${p}`;
      const as = (token: string) => ({ authorization: `Bearer ${token}` });
      // The same tokens, accounts, statuses, follow and media.
      const me: any = await (await fetch(at('/api/v1/accounts/verify_credentials'), { headers: as(alice.token) })).json();
      expect([me.id, me.username, me.statuses_count, me.followers_count]).toEqual([alice.account.id, 'alice', 1, 1]);
      const status: any = await (await fetch(at(`/api/v1/statuses/${posted.body.id}`), { headers: as(bob.token) })).json();
      expect(status.content).toBe(posted.body.content);
      expect(status.media_attachments.map((m: { description: string }) => m.description)).toEqual(['a red square']);
      const file = await fetch(at(new URL(status.media_attachments[0].url).pathname));
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer()).length).toBeGreaterThan(0);
      const rel: any = await (await fetch(at(`/api/v1/accounts/relationships?id[]=${alice.account.id}`), { headers: as(bob.token) })).json();
      expect(rel[0].following).toBe(true);
      // Every row of those tables, byte for byte in their text form; the queued job, still queued.
      const db = new pg.Client({ connectionString: roost.services.config.databaseUrl ?? (await import('../../src/db/embedded.ts')).embeddedUrl(path.join(dataDir, 'postgres')) });
      await db.connect();
      try {
        expect(await digest(db, TABLES)).toEqual(before);
        const job = await db.query(`select state, kind from jobs where id = $1`, [queued]);
        expect(job.rows).toEqual([{ state: 'pending', kind: 'test.later' }]);
        // Sequences continue past the copied rows: a new job gets a larger id.
        const next = await db.query(`select nextval(pg_get_serial_sequence('jobs', 'id'))::bigint as id`);
        expect(BigInt(next.rows[0].id)).toBeGreaterThan(BigInt(queued));
      } finally {
        await db.end();
      }
      expect(existsSync(path.join(pgliteDirOf(dataDir), 'PG_VERSION'))).toBe(true);
    } finally {
      await roost.close();
    }

    // A second start: nothing copied twice (the unique keys would refuse it), same rows.
    roost = await startRoost(config, { controlSocket: false });
    try {
      const statuses: any = await (await fetch(`http://127.0.0.1:${roost.port}/api/v1/accounts/${alice.account.id}/statuses`, { headers: { authorization: `Bearer ${bob.token}` } })).json();
      expect(statuses.map((s: { id: string }) => s.id)).toEqual([posted.body.id]);
    } finally {
      await roost.close();
    }
  }, 240_000);
});
