/**
 * The recipient expansion (src/federation/audience.ts) on the Roost schema with real rows: the
 * remote followers and their inboxes (a shared inbox once), a remote account as a recipient, and
 * a status's reach — the mentioned, the replied-to author, rebloggers (live ones or all), poll
 * voters — minus local, suspended and following accounts, in one statement (none when there is
 * nobody to ask about).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { openDatabase, type Database } from '../../src/db/orm.ts';
import type { Sql } from '../../src/db/sql.ts';
import { inboxesOf, remoteAccount, remoteFollowers, statusReach, type ReachStatus, type RemoteRecipientRow } from '../../src/federation/audience.ts';
import { createTestDatabase } from '../helpers/roost.ts';

const NOW = new Date('2026-11-28T12:00:00Z');

/** The local author and the accounts around it. */
const AUTHOR = '1';
const LOCAL = '2';
const R = {
  followerA1: '10', // a.test, shared inbox
  followerA2: '11', // a.test, shared inbox; also reblogged
  followerB: '12', // b.test, no shared inbox; also voted
  requested: '13', // asked to follow, not accepted
  suspendedFollower: '14',
  mentioned: '20',
  repliedTo: '22',
  reblogger: '23',
  deletedReblogger: '24',
  voter: '25',
  suspendedMentioned: '26',
} as const;
const HOSTS: Record<string, string> = { [R.followerA1]: 'a.test', [R.followerA2]: 'a.test', [R.followerB]: 'b.test' };

let db: Database;
let drop: () => Promise<void>;
let statements = 0;
/** db.sql, counting the statements sent through it. */
let counted: Sql;

const row = (id: string): RemoteRecipientRow => {
  const host = HOSTS[id] ?? `h${id}.test`;
  return { id, uri: `https://${host}/users/u${id}`, inbox_url: `https://${host}/users/u${id}/inbox`, shared_inbox_url: host === 'b.test' ? null : `https://${host}/inbox` };
};

beforeAll(async () => {
  const t = await createTestDatabase();
  drop = t.drop;
  db = await openDatabase({ databaseUrl: t.url, poolMax: 1 });
  // The PGlite template is migrated already; a fresh PostgreSQL database is not.
  if (t.url) await db.migrate();
  counted = { ...db.sql, query: (text: string, params?: readonly unknown[]) => (statements++, db.sql.query(text, params)) } as Sql;
  const insertAccount = (id: string, local: boolean, suspended = false) => {
    const r = row(id);
    return db.sql.query(
      `insert into accounts (id, username, domain, uri, inbox_url, shared_inbox_url, suspended_at, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
      [id, `u${id}`, local ? null : new URL(r.uri).host, local ? `https://roost.test/users/u${id}` : r.uri, local ? null : r.inbox_url, local ? null : r.shared_inbox_url, suspended ? NOW : null, NOW],
    );
  };
  await insertAccount(AUTHOR, true);
  await insertAccount(LOCAL, true);
  for (const id of Object.values(R)) await insertAccount(id, false, id === R.suspendedFollower || id === R.suspendedMentioned);
  const follow = (id: string, state: string) =>
    db.sql.query(`insert into follows (id, account_id, target_account_id, state, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)`, [`3${id}`, id, AUTHOR, state, NOW]);
  for (const id of [R.followerA1, R.followerA2, R.followerB, R.suspendedFollower]) await follow(id, 'accepted');
  await follow(R.requested, 'requested');
  const status = (id: string, accountId: string, reblogOf: string | null, deleted = false) =>
    db.sql.query(`insert into statuses (id, account_id, uri, local, reblog_of_id, created_at, updated_at, deleted_at) values ($1, $2, $3, $4, $5, $6, $6, $7)`, [
      id, accountId, `https://x.test/s/${id}`, accountId === AUTHOR, reblogOf, NOW, deleted ? NOW : null,
    ]);
  await status('100', AUTHOR, null);
  await status('101', R.reblogger, '100');
  await status('102', R.deletedReblogger, '100', true);
  await status('103', R.followerA2, '100');
  await db.sql.query(`insert into polls (id, status_id, account_id, local, options, cached_tallies, created_at, updated_at) values (200, 100, $1, true, '{a,b}', '{0,0}', $2, $2)`, [AUTHOR, NOW]);
  await db.sql.query(
    `insert into poll_votes (id, poll_id, voter, account_id, choices, created_at, updated_at) values
       (300, 200, 'v25', $1, '{0}', $3, $3), (301, 200, 'v12', $2, '{1}', $3, $3), (302, 200, 'local', null, '{1}', $3, $3)`,
    [R.voter, R.followerB, NOW],
  );
});

afterAll(async () => {
  await db?.close();
  await drop?.();
});

const status = (visibility: string, mentioned: string[] = [R.mentioned, R.followerA1]): ReachStatus => ({
  id: '100',
  accountId: AUTHOR,
  inReplyToAccountId: R.repliedTo,
  mentioned: mentioned.map(row),
  note: { visibility },
});

async function reach(s: ReachStatus, also: Parameters<typeof statusReach>[2] = {}) {
  const before = statements;
  const r = await statusReach(counted, s, also);
  return { followers: r.followers, direct: r.direct.map((d) => d.id), statements: statements - before };
}

describe('recipient expansion', () => {
  it('the remote accepted followers, not suspended; a shared inbox once for all its actors', async () => {
    const followers = await remoteFollowers(db.sql, AUTHOR);
    expect(followers.map((f) => f.id).sort()).toEqual([R.followerA1, R.followerA2, R.followerB]);
    const shared = inboxesOf(followers, true);
    expect(Object.keys(shared).sort()).toEqual(['https://a.test/inbox', 'https://b.test/users/u12/inbox']);
    expect(shared['https://a.test/inbox']).toEqual({ actors: expect.arrayContaining([row(R.followerA1).uri, row(R.followerA2).uri]), shared: true });
    expect(shared['https://a.test/inbox']!.actors).toHaveLength(2);
    expect(shared['https://b.test/users/u12/inbox']).toEqual({ actors: [row(R.followerB).uri], shared: false });
    expect(Object.keys(inboxesOf(followers, false)).sort()).toEqual([row(R.followerA1).inbox_url, row(R.followerA2).inbox_url, row(R.followerB).inbox_url]);
    expect(inboxesOf([{ uri: 'https://n.test/u', inbox_url: null, shared_inbox_url: null }], true)).toEqual({});
  });

  it('a remote account as a recipient; none for a local, suspended or missing one', async () => {
    expect(await remoteAccount(db.sql, R.repliedTo)).toEqual(row(R.repliedTo));
    expect(await remoteAccount(db.sql, LOCAL)).toBeNull();
    expect(await remoteAccount(db.sql, R.suspendedFollower)).toBeNull();
    expect(await remoteAccount(db.sql, '999')).toBeNull();
  });

  it('a public status: its followers, and the mentioned who do not follow, in one statement', async () => {
    expect(await reach(status('public'))).toEqual({ followers: true, direct: [R.mentioned], statements: 1 });
    expect(await reach(status('unlisted'), { repliedTo: true })).toEqual({ followers: true, direct: [R.mentioned, R.repliedTo], statements: 1 });
  });

  it('the replied-to author only for a public or unlisted reply; a direct status reaches the mentioned followers one by one', async () => {
    expect(await reach(status('private'), { repliedTo: true })).toEqual({ followers: true, direct: [R.mentioned], statements: 1 });
    // Only the mentioned, as loaded with the status: no statement.
    expect(await reach(status('direct'), { repliedTo: true })).toEqual({ followers: false, direct: [R.mentioned, R.followerA1], statements: 0 });
    expect(await reach(status('limited', [R.followerB, R.followerB]))).toEqual({ followers: false, direct: [R.followerB], statements: 0 });
  });

  it('rebloggers: live ones, or all of them for a deletion; poll voters; never a local account', async () => {
    expect(await reach(status('public', []), { rebloggers: 'live' })).toEqual({ followers: true, direct: [R.reblogger], statements: 1 });
    expect(await reach(status('public', []), { rebloggers: 'all', repliedTo: true })).toEqual({
      followers: true, direct: [R.repliedTo, R.reblogger, R.deletedReblogger], statements: 1,
    });
    expect(await reach(status('public', []), { pollVoters: '200', rebloggers: 'live' })).toEqual({ followers: true, direct: [R.reblogger, R.voter], statements: 1 });
    expect(await reach(status('direct', []), { pollVoters: '200' })).toEqual({ followers: false, direct: [R.followerB, R.voter], statements: 1 });
    expect(await reach(status('public', []), { accounts: [LOCAL, R.suspendedMentioned, R.repliedTo] })).toEqual({ followers: true, direct: [R.repliedTo], statements: 1 });
    expect(await reach(status('direct'), { accounts: [R.repliedTo, R.mentioned] })).toEqual({ followers: false, direct: [R.mentioned, R.followerA1, R.repliedTo], statements: 1 });
  });

  it('no statement when there is nobody but the followers, or only the mentioned of a direct status', async () => {
    expect(await reach(status('public', []))).toEqual({ followers: true, direct: [], statements: 0 });
    expect(await reach({ ...status('public', []), inReplyToAccountId: null }, { repliedTo: true })).toEqual({ followers: true, direct: [], statements: 0 });
    expect(await reach(status('private', []), { repliedTo: true })).toEqual({ followers: true, direct: [], statements: 0 });
  });
});
