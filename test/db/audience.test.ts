/**
 * The who-may-see-whom vocabulary (src/db/audience.ts), each builder run inside a real statement on
 * the Roost schema, with rows that make it true and rows that make it false: a mute in force, one
 * expired, one with an end ahead, one leaving notifications on; blocks each way; a domain block
 * against an account whose domain is written in another case; thread mutes. The by-target form
 * the streaming hub uses is checked against the by-viewer form on the same rows.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { openDatabase, type Database } from '../../src/db/orm.ts';
import {
  accountDomainBlockedBySql,
  accountsHidingSql,
  blockedEitherWaySql,
  blocksSql,
  domainBlockedBySql,
  hiddenFromSql,
  mutedBySql,
  muteInForceSql,
  threadMutedBySql,
} from '../../src/db/audience.ts';
import { createTestDatabase } from '../helpers/roost.ts';

const NOW = new Date('2026-11-28T12:00:00Z');
const BEFORE = new Date('2026-11-28T11:00:00Z');
const LATER = new Date('2026-11-28T13:00:00Z');

/** The viewer, and the accounts it sees, each by what it is to the viewer. */
const V = '1';
const A = {
  plain: '10',
  muted: '11',
  muteExpired: '12',
  muteEndsLater: '13',
  mutedNotificationsOn: '14',
  blockedByViewer: '15',
  blocksViewer: '16',
  onBlockedDomain: '17',
  otherDomain: '18',
  local: '19',
  mentionedMuted: '20',
} as const;
const AUTHORS = Object.values(A);

let db: Database;
let drop: () => Promise<void>;

beforeAll(async () => {
  const t = await createTestDatabase();
  drop = t.drop;
  db = await openDatabase({ databaseUrl: t.url, poolMax: 1 });
  // The PGlite template is migrated already; a fresh PostgreSQL database is not.
  if (t.url) await db.migrate();
  const domains: Record<string, string | null> = { [A.onBlockedDomain]: 'Spam.EXAMPLE', [A.otherDomain]: 'other.example', [A.blocksViewer]: 'social.example' };
  for (const id of [V, ...AUTHORS]) {
    const domain = domains[id] ?? null;
    await db.sql.query(`insert into accounts (id, username, domain, uri, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)`, [
      id, `u${id}`, domain, `https://${domain ?? 'roost.test'}/users/u${id}`, NOW,
    ]);
  }
  const mute = (target: string, hide: boolean, expires: Date | null) =>
    db.sql.query(`insert into mutes (id, account_id, target_account_id, hide_notifications, expires_at, created_at) values ($1, $2, $3, $4, $5, $6)`, [
      `5${target}`, V, target, hide, expires, BEFORE,
    ]);
  await mute(A.muted, true, null);
  await mute(A.muteExpired, true, BEFORE);
  await mute(A.muteEndsLater, true, LATER);
  await mute(A.mutedNotificationsOn, false, null);
  await mute(A.mentionedMuted, true, null);
  const block = (from: string, to: string) =>
    db.sql.query(`insert into blocks (id, account_id, target_account_id, created_at) values ($1, $2, $3, $4)`, [`6${from}${to}`, from, to, BEFORE]);
  await block(V, A.blockedByViewer);
  await block(A.blocksViewer, V);
  // Stored lower-cased, as services/relationships.ts writes it; the account's domain is not.
  await db.sql.query(`insert into account_domain_blocks (id, account_id, domain, created_at) values (70, $1, 'spam.example', $2)`, [V, BEFORE]);
  await db.sql.query(`insert into conversations (id, created_at) values (100, $1), (101, $1)`, [BEFORE]);
  await db.sql.query(`insert into conversation_mutes (account_id, conversation_id, created_at) values ($1, 100, $2)`, [V, BEFORE]);
});

afterAll(async () => {
  await db?.close();
  await drop?.();
});

/** The ids of the authors for which `predicate` (over `a`, the author's accounts row) holds. */
async function holdsFor(predicate: string, params: unknown[] = [V, NOW]): Promise<string[]> {
  const rows = await db.sql.query<{ id: string; holds: boolean }>(
    `select a.id::text as id, ${predicate} as holds from accounts a
      where a.id = any($3::bigint[]) and $1::bigint is not null and $2::timestamptz is not null order by a.id`,
    [...params, AUTHORS],
  );
  expect(rows).toHaveLength(AUTHORS.length);
  return rows.filter((r) => r.holds).map((r) => r.id);
}

describe('who may see or hear whom', () => {
  it('a mute holds while in force: without an end or before it', async () => {
    expect(await holdsFor(mutedBySql('$1::bigint', 'a.id', '$2::timestamptz'))).toEqual([A.muted, A.muteEndsLater, A.mutedNotificationsOn, A.mentionedMuted]);
    // At the end of the timed mute, it is over.
    expect(await holdsFor(mutedBySql('$1::bigint', 'a.id', '$2::timestamptz'), [V, LATER])).toEqual([A.muted, A.mutedNotificationsOn, A.mentionedMuted]);
    // Only the viewer's mutes count: nobody mutes the viewer.
    expect(await holdsFor(mutedBySql('a.id', '$1::bigint', '$2::timestamptz'))).toEqual([]);
  });

  it('for notifications, only a mute that hides them', async () => {
    expect(await holdsFor(mutedBySql('$1::bigint', 'a.id', '$2::timestamptz', { notifications: true }))).toEqual([A.muted, A.muteEndsLater, A.mentionedMuted]);
  });

  it('the mute-row predicate, on the rows of the mutes table', async () => {
    const rows = await db.sql.query<{ target: string }>(
      `select m.target_account_id::text as target from mutes m where m.account_id = $1 and ${muteInForceSql('m', '$2::timestamptz')} order by 1`,
      [V, NOW],
    );
    expect(rows.map((r) => r.target)).toEqual([A.muted, A.muteEndsLater, A.mutedNotificationsOn, A.mentionedMuted]);
  });

  it('blocks one way and either way', async () => {
    expect(await holdsFor(blocksSql('$1::bigint', 'a.id'))).toEqual([A.blockedByViewer]);
    expect(await holdsFor(blocksSql('a.id', '$1::bigint'))).toEqual([A.blocksViewer]);
    expect(await holdsFor(blockedEitherWaySql('$1::bigint', 'a.id'))).toEqual([A.blockedByViewer, A.blocksViewer]);
    expect(await holdsFor(blockedEitherWaySql('a.id', '$1::bigint'))).toEqual([A.blockedByViewer, A.blocksViewer]);
  });

  it('domain blocks match the domain in any case; a local account is never domain-blocked', async () => {
    expect(await holdsFor(domainBlockedBySql('$1::bigint', 'a.domain'))).toEqual([A.onBlockedDomain]);
    expect(await holdsFor(accountDomainBlockedBySql('$1::bigint', 'a.id'))).toEqual([A.onBlockedDomain]);
    const [row] = await db.sql.query<{ upper: boolean; other: boolean; none: boolean }>(
      `select ${domainBlockedBySql('$1::bigint', `'SPAM.example'`)} as upper, ${domainBlockedBySql('$1::bigint', `'spam.example.org'`)} as other,
              ${domainBlockedBySql('$1::bigint', 'null::text')} as none`,
      [V],
    );
    expect(row).toEqual({ upper: true, other: false, none: false });
  });

  it('hidden: blocks either way, mutes in force, blocked domains; for notifications, own blocks and notification mutes only', async () => {
    expect(await holdsFor(hiddenFromSql('$1::bigint', 'a.id', '$2::timestamptz'))).toEqual([
      A.muted, A.muteEndsLater, A.mutedNotificationsOn, A.blockedByViewer, A.blocksViewer, A.onBlockedDomain, A.mentionedMuted,
    ]);
    expect(await holdsFor(hiddenFromSql('$1::bigint', 'a.id', '$2::timestamptz', { notifications: true }))).toEqual([
      A.muted, A.muteEndsLater, A.blockedByViewer, A.onBlockedDomain, A.mentionedMuted,
    ]);
  });

  it('by target: exactly the viewers the by-viewer form hides the author from, and those who block or mute a mentioned account', async () => {
    const hiding = async (targets: string[], author: string, at = NOW) =>
      (
        await db.sql.query<{ id: string }>(
          `select h.id::text as id from (${accountsHidingSql('$1::bigint[]', '$2::bigint', '(select domain from accounts where id = $2::bigint)', '$3::timestamptz')}) h (id) order by 1`,
          [targets, author, at],
        )
      ).map((r) => r.id);
    const hidden = await holdsFor(hiddenFromSql('$1::bigint', 'a.id', '$2::timestamptz'));
    for (const author of AUTHORS) {
      const viewerAmong = (await hiding([author], author)).filter((id) => id !== author).includes(V);
      expect({ author, hidden: viewerAmong }).toEqual({ author, hidden: hidden.includes(author) });
    }
    expect(await hiding([A.plain, A.mentionedMuted], A.plain)).toEqual([V]);
    expect(await hiding([A.plain], A.plain)).toEqual([]);
    expect(await hiding([A.muteEndsLater], A.muteEndsLater, LATER)).toEqual([]);
  });

  it('thread mutes: the muted conversation only; a status in no thread is not muted', async () => {
    const [row] = await db.sql.query<{ muted: boolean; other: boolean; none: boolean; someone_else: boolean }>(
      `select ${threadMutedBySql('$1::bigint', '100')} as muted, ${threadMutedBySql('$1::bigint', '101')} as other,
              ${threadMutedBySql('$1::bigint', 'null::bigint')} as none, ${threadMutedBySql('$2::bigint', '100')} as someone_else`,
      [V, A.plain],
    );
    expect(row).toEqual({ muted: true, other: false, none: false, someone_else: false });
  });

  it("refuses an argument that names the builders' own aliases", () => {
    expect(() => mutedBySql('am.account_id', 'a.id', '$2')).toThrow(/names an alias the builder uses/);
    expect(() => blockedEitherWaySql('$1', 'ab.target_account_id')).toThrow(/names an alias/);
    expect(() => accountDomainBlockedBySql('$1', 'ada.id')).toThrow(/names an alias/);
    expect(() => hiddenFromSql('$1', 'ad.account_id', '$2')).toThrow(/names an alias/);
    // A name that merely starts like one is fine.
    expect(mutedBySql('amx.id', 'abc.id', '$2')).toContain('am.target_account_id = abc.id');
  });
});
