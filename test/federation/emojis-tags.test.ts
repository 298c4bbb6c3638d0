/**
 * Custom emojis and followed tags across two real instances (real HTTP, real signatures): a status
 * on A using A's custom emoji reaches B with an `Emoji` tag, B stores the remote copy (and
 * refreshes it when its image changes) and renders the status and the author's display name with
 * it; a public post with a hashtag a user of B follows lands in that user's home on B.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import sharp from 'sharp';
import { startTestRoost, eventually, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { followAccount } from '../../src/services/follows.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { addCustomEmoji } from '../../src/services/custom-emojis.ts';

let a: TestRoost;
let b: TestRoost;
let alice: TestUser; // on A
let bob: TestUser; // on B, follows alice
let carol: TestUser; // on B, follows #Roost, not alice

const AP = { accept: 'application/activity+json' };

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  [alice, bob, carol] = await Promise.all([createTestUser(a, 'alice'), createTestUser(b, 'bob'), createTestUser(b, 'carol')]);
  const image = await sharp({ create: { width: 24, height: 24, channels: 4, background: '#33aa55' } }).png().toBuffer();
  await addCustomEmoji(a.services, { shortcode: 'roostling', data: image, category: 'Birds' });
  const aliceOnB = (await lookupRemoteAccount(b.services, b.federation, a.at('/users/alice')))!;
  const follow = await followAccount(b.services, bob.account.id, aliceOnB.id);
  await eventually(async () => (await b.services.db.sql.query(`select 1 from follows where id = $1 and state = 'accepted'`, [follow.id])).length > 0, 20_000, 'the Accept');
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const statusOnB = (uri: string) =>
  eventually(async () => (await b.services.db.sql.query<{ id: string }>(`select id::text from statuses where uri = $1`, [uri]))[0], 20_000, `${uri} on B`);

describe('custom emojis and followed tags between two instances', () => {
  it('a status using a custom emoji on A renders with that emoji on B', async () => {
    const [local] = (await a.services.db.sql.query<{ id: string }>(`select id::text from custom_emojis where shortcode = 'roostling'`));
    const emojiOnA = (await (await fetch(a.at('/api/v1/custom_emojis'))).json() as { url: string }[])[0]!;
    const posted = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'hatched :roostling: today' } });
    expect(posted.status).toBe(200);
    expect(posted.body.emojis).toEqual([{ shortcode: 'roostling', url: emojiOnA.url, static_url: expect.stringContaining('/static/'), visible_in_picker: true, category: 'Birds' }]);
    // The Note A serves carries the Emoji tag.
    const note = (await (await fetch(posted.body.uri, { headers: AP })).json()) as { tag: { type: string } | { type: string }[] };
    // (one tag: JSON-LD compaction makes it an object rather than a list)
    expect([note.tag].flat().find((t) => t.type === 'Emoji')).toEqual({
      id: a.at(`/emojis/${local!.id}`),
      type: 'Emoji',
      name: ':roostling:',
      updated: expect.any(String),
      icon: { type: 'Image', mediaType: 'image/png', url: emojiOnA.url },
    });
    // …and the Emoji is served at its id.
    const served = await fetch(a.at(`/emojis/${local!.id}`), { headers: AP });
    expect(served.status).toBe(200);
    expect(await served.json()).toMatchObject({ id: a.at(`/emojis/${local!.id}`), type: 'Emoji', name: ':roostling:', icon: { url: emojiOnA.url } });
    expect((await fetch(a.at('/emojis/999'), { headers: AP })).status).toBe(404);
    const onB = await statusOnB(posted.body.uri);
    const seen = await bob.api(`/api/v1/statuses/${onB.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body.content).toContain(':roostling:');
    expect(seen.body.emojis).toEqual([{ shortcode: 'roostling', url: emojiOnA.url, static_url: emojiOnA.url, visible_in_picker: true }]);
    expect(
      await b.services.db.sql.query(`select shortcode, domain, uri, image_url from custom_emojis`),
    ).toEqual([{ shortcode: 'roostling', domain: a.config.domain, uri: a.at(`/emojis/${local!.id}`), image_url: emojiOnA.url }]);
    // Not B's own: B's picker stays empty, and B's users' ":roostling:" is just text.
    expect(await (await fetch(b.at('/api/v1/custom_emojis'))).json()).toEqual([]);
    const own = await bob.api('/api/v1/statuses', { method: 'POST', body: { status: 'me too :roostling:' } });
    expect(own.body.emojis).toEqual([]);
  });

  it("the author's display name with an emoji reaches B through Update(Person); a new image refreshes the copy", async () => {
    const r = await alice.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { display_name: 'Alice :roostling:' } });
    expect(r.body.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['roostling']);
    const aliceOnB = await eventually(async () => {
      const [row] = await b.services.db.sql.query<{ id: string }>(`select id::text from accounts where uri = $1 and display_name = 'Alice :roostling:'`, [a.at('/users/alice')]);
      return row;
    }, 20_000, 'the Update(Person)');
    const account = await bob.api(`/api/v1/accounts/${aliceOnB.id}`);
    expect(account.body.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['roostling']);

    // A replaces the image (same shortcode, new file): the next Note's tag refreshes B's copy.
    await a.services.db.sql.query(`delete from custom_emojis where shortcode = 'roostling'`);
    const image = await sharp({ create: { width: 24, height: 24, channels: 4, background: '#aa3355' } }).png().toBuffer();
    await addCustomEmoji(a.services, { shortcode: 'roostling', data: image });
    const newUrl = ((await (await fetch(a.at('/api/v1/custom_emojis'))).json()) as { url: string }[])[0]!.url;
    const again = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'new look :roostling:' } });
    await statusOnB(again.body.uri);
    await settled(a, b);
    expect(await b.services.db.sql.query(`select shortcode, image_url from custom_emojis`)).toEqual([{ shortcode: 'roostling', image_url: newUrl }]);
  });

  it("a public post with a hashtag carol follows on B lands in carol's home on B", async () => {
    expect((await carol.api('/api/v1/tags/roost/follow', { method: 'POST' })).body.following).toBe(true);
    const tagged = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'news from the #Roost' } });
    const untagged = await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'nothing for carol' } });
    const taggedOnB = await statusOnB(tagged.body.uri);
    const untaggedOnB = await statusOnB(untagged.body.uri);
    await settled(a, b);
    const home = (await carol.api('/api/v1/timelines/home')).body.map((s: { id: string }) => s.id);
    expect(home).toContain(taggedOnB.id);
    expect(home).not.toContain(untaggedOnB.id);
  });
});
