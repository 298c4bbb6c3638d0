/**
 * A page of statuses renders with a fixed number of statements: 5 and 20 statuses (with
 * reblogs, mentions, tags, favourites, media attachments, polls the reader voted on, an
 * application, preview cards and muted threads) cost the same statements.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';

let roost: TestRoost;
let poster: TestUser;
let reader: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  poster = await createTestUser(roost, 'poster');
  reader = await createTestUser(roost, 'reader');
  const others: TestUser[] = [];
  for (let i = 0; i < 4; i++) others.push(await createTestUser(roost, `other${i}`));
  for (let i = 0; i < 24; i++) {
    if (i % 3 === 0) {
      // A reblog of another account's status: its original renders nested, in the same statements.
      const other = others[i % others.length]!;
      const s = (await other.api('/api/v1/statuses', { method: 'POST', body: { status: `by ${other.account.username} #topic` } })).body;
      expect((await poster.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST' })).status).toBe(200);
    } else {
      // One in three with two pictures.
      const mediaIds: string[] = [];
      for (let k = 0; i % 3 === 1 && k < 2; k++) {
        const form = new FormData();
        const png = await sharp({ create: { width: 16, height: 9, channels: 3, background: { r: 10 * i, g: 100, b: 50 * k } } }).png().toBuffer();
        form.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'p.png');
        form.append('description', `picture ${i}.${k}`);
        mediaIds.push((await poster.api('/api/v1/media', { method: 'POST', body: form })).body.id);
      }
      // The rest with a poll the reader votes on: polls and own votes come in one statement.
      const poll = i % 3 === 2 ? { options: ['yes', 'no'], expires_in: 3600 } : undefined;
      const s = (await poster.api('/api/v1/statuses', { method: 'POST', body: { status: `post ${i} @reader @other${i % 4} #n${i}`, media_ids: mediaIds, poll } })).body;
      await reader.api(`/api/v1/statuses/${s.id}/favourite`, { method: 'POST' });
      if (poll) expect((await reader.api(`/api/v1/polls/${s.poll.id}/votes`, { method: 'POST', body: { choices: ['0'] } })).status).toBe(200);
      if (i % 2 === 0) await reader.api(`/api/v1/statuses/${s.id}/mute`, { method: 'POST' });
    }
  }
  // A preview card on every status of the poster's that is not a reblog (as the card job leaves them).
  const sql = roost.services.db.sql;
  const now = new Date();
  await sql.query(
    `insert into preview_cards (id, url, title, created_at, updated_at) values ($1, 'https://cards.example/x', 'A card', $2, $2)`,
    [roost.services.ids.next(), now],
  );
  await sql.query(
    `insert into preview_cards_statuses (status_id, preview_card_id, url)
     select s.id, pc.id, pc.url from statuses s, preview_cards pc where s.account_id = $1 and s.reblog_of_id is null`,
    [poster.account.id],
  );
}, 120_000);
afterAll(async () => roost?.close());

describe('a page of statuses costs a fixed number of queries', () => {
  it("for an account's statuses: 5 and 20 alike, signed in", async () => {
    const path = `/api/v1/accounts/${poster.account.id}/statuses`;
    await reader.api(`${path}?limit=1`); // the token is now cached, like any busy client's
    let five:
      | {
          status: number;
          body: { reblog: unknown; mentions: unknown[]; favourited: boolean; media_attachments: { description: string }[]; poll: { own_votes: number[] } | null; muted: boolean; card: { title: string } | null }[];
        }
      | undefined;
    let twenty: typeof five;
    const q5 = await capturedStatements(roost, async () => (five = await reader.api(`${path}?limit=5`)));
    const q20 = await capturedStatements(roost, async () => (twenty = await reader.api(`${path}?limit=20`)));
    expect([five!.status, five!.body.length, twenty!.status, twenty!.body.length]).toEqual([200, 5, 200, 20]);
    expect(twenty!.body.filter((s) => s.reblog).length).toBeGreaterThanOrEqual(6);
    expect(twenty!.body.filter((s) => s.favourited).length).toBeGreaterThanOrEqual(12);
    const withMedia = twenty!.body.filter((s) => s.media_attachments.length > 0);
    expect(withMedia.length).toBeGreaterThanOrEqual(6);
    // In the order posted, each status its own pictures.
    for (const s of withMedia) {
      const n = /^post (\d+)/.exec((s as unknown as { content: string }).content.replace(/<[^>]+>/g, ''))![1];
      expect(s.media_attachments.map((m) => m.description)).toEqual([`picture ${n}.0`, `picture ${n}.1`]);
    }
    expect(twenty!.body.filter((s) => s.poll?.own_votes[0] === 0).length).toBeGreaterThanOrEqual(6);
    expect(twenty!.body.filter((s) => s.muted).length).toBeGreaterThanOrEqual(6);
    expect(twenty!.body.filter((s) => s.card?.title === 'A card').length).toBeGreaterThanOrEqual(12);
    expect(q20).toEqual(q5);
    // Who the account is, the page of ids, the statuses (with their cards, mentions, tags, media,
    // polls, the viewer's flags, muted threads included, and the viewer's filters), their authors.
    expect(q5.length).toBe(4);
  });
});
