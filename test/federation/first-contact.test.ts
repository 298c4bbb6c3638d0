/**
 * What a Mastodon server trips over on first contact with Roost (issue 8, items 16–18), between
 * two real instances: one CORS header on WebFinger, profile links (/@user) as actor and WebFinger
 * resource, and an actor document carrying the HTML the REST API renders.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { lookupRemoteAccount } from '../../src/federation/lookup.ts';
import { AccountSchema } from '../../src/db/entities/index.ts';
import sharp from 'sharp';

const AP = { accept: 'application/activity+json' };
let a: TestRoost;
let b: TestRoost;
let poet: TestUser;
let bob: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestRoost(), startTestRoost()]);
  poet = await createTestUser(a, 'poet');
  bob = await createTestUser(a, 'bob');
});
afterAll(async () => Promise.all([a?.close(), b?.close()]));

describe('WebFinger and profile links', () => {
  it('sends Access-Control-Allow-Origin once', async () => {
    const res = await fetch(a.at(`/.well-known/webfinger?resource=acct:poet@${a.config.domain}`), { headers: { origin: 'https://app.example' } });
    expect(res.status).toBe(200);
    // Two headers would read "*, *" here (fetch joins repeated headers), which browsers refuse.
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers /@username with the actor for ActivityPub clients, and the profile page for browsers', async () => {
    const res = await fetch(a.at('/@poet'), { headers: AP });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/activity\+json/);
    const actor = (await res.json()) as any;
    expect(actor.id).toBe(a.at('/users/poet'));
    expect(actor.preferredUsername).toBe('poet');
    const ld = await fetch(a.at('/@poet'), { headers: { accept: 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"' } });
    expect(((await ld.json()) as any).id).toBe(a.at('/users/poet'));
    expect((await fetch(a.at('/@nobody'), { headers: AP })).status).toBe(404);
    const page = await fetch(a.at('/@poet'), { headers: { accept: 'text/html' } });
    expect([page.status, page.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
  });

  it('takes the profile URL and the actor URL as WebFinger resources', async () => {
    for (const resource of [a.at('/@poet'), a.at('/users/poet')]) {
      const res = await fetch(a.at(`/.well-known/webfinger?resource=${encodeURIComponent(resource)}`));
      expect(res.status).toBe(200);
      const jrd = (await res.json()) as any;
      expect(jrd.links.find((l: any) => l.rel === 'self').href).toBe(a.at('/users/poet'));
    }
    expect((await fetch(a.at(`/.well-known/webfinger?resource=${encodeURIComponent(a.at('/@nobody'))}`))).status).toBe(404);
    expect((await fetch(a.at(`/.well-known/webfinger?resource=${encodeURIComponent('https://elsewhere.example/@poet')}`))).status).toBe(404);
  });

  it('lets another server find an account from its pasted profile link', async () => {
    const found = await lookupRemoteAccount(b.services, b.federation, a.at('/@poet'));
    expect(found?.uri).toBe(a.at('/users/poet'));
    expect(found?.username).toBe('poet');
  });
});

describe('the actor document', () => {
  it('carries the REST API HTML for the bio and field values, and the attributes Mastodon reads', async () => {
    // A remote account A knows, to mention.
    const carol = await createTestUser(b, 'carol');
    const carolOnA = (await lookupRemoteAccount(a.services, a.federation, `carol@${b.config.domain}`))!;
    expect(carolOnA).not.toBeNull();
    const form = new FormData();
    form.append('note', 'Verses & <tags> #Poetry with @bob, @carol@' + b.config.domain + ' and @ghost\n\nhttps://poet.example/about');
    form.append('fields_attributes[0][name]', 'Site');
    form.append('fields_attributes[0][value]', 'https://poet.example');
    form.append('avatar', new Blob([new Uint8Array(await sharp(Buffer.alloc(64, 9), { raw: { width: 4, height: 4, channels: 4 } }).png().toBuffer())]), 'a.png');
    const updated = await poet.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: form });
    expect(updated.status).toBe(200);

    const rest = (await poet.api(`/api/v1/accounts/${poet.account.id}`)).body;
    expect(rest.note).toBe(
      '<p>Verses &amp; &lt;tags&gt; ' +
        `<a href="${a.at('/tags/Poetry')}" class="mention hashtag" rel="tag">#<span>Poetry</span></a> with ` +
        `<span class="h-card" translate="no"><a href="${a.at('/@bob')}" class="u-url mention">@<span>bob</span></a></span>, ` +
        `<span class="h-card" translate="no"><a href="${carolOnA.url}" class="u-url mention">@<span>carol</span></a></span> and @ghost</p>` +
        '<p><a href="https://poet.example/about" target="_blank" rel="nofollow noopener" translate="no"><span class="invisible">https://</span><span class="">poet.example/about</span><span class="invisible"></span></a></p>',
    );
    expect(carolOnA.url).toBe(b.at('/@carol'));
    void carol;

    const actor = (await (await fetch(a.at('/users/poet'), { headers: AP })).json()) as any;
    expect(actor.summary).toBe(rest.note);
    expect([actor.attachment].flat()).toEqual([{ type: 'PropertyValue', name: 'Site', value: rest.fields[0].value }]);
    expect(rest.fields[0].value).toContain('rel="nofollow noopener me"');
    expect(actor.name).toBe('');
    expect(actor.icon).toEqual({ type: 'Image', mediaType: 'image/png', url: rest.avatar });
    const created = new Date(poet.account.createdAt);
    expect(actor.published).toBe(`${created.toISOString().slice(0, 10)}T00:00:00Z`);

    const outbox = (await (await fetch(actor.outbox, { headers: AP })).json()) as any;
    expect(outbox.totalItems).toBe(0);
  });

  it('pages followers and following from a first page', async () => {
    const fan = await createTestUser(b, 'fan');
    const poetOnB = (await lookupRemoteAccount(b.services, b.federation, `poet@${a.config.domain}`))!;
    await fan.api(`/api/v1/accounts/${poetOnB.id}/follow`, { method: 'POST' });
    await eventually(async () => (await fan.api(`/api/v1/accounts/relationships?id[]=${poetOnB.id}`)).body[0]?.following === true, 20_000, 'the Accept');
    await bob.api(`/api/v1/accounts/${poet.account.id}/follow`, { method: 'POST' });
    await poet.api(`/api/v1/accounts/${bob.account.id}/follow`, { method: 'POST' });

    const followers = (await (await fetch(a.at('/users/poet/followers'), { headers: AP })).json()) as any;
    expect(followers.totalItems).toBe(2);
    expect(typeof followers.first).toBe('string');
    const page = (await (await fetch(followers.first, { headers: AP })).json()) as any;
    expect(page.type).toBe('OrderedCollectionPage');
    expect(page.orderedItems).toEqual([a.at('/users/bob'), b.at('/users/fan')]);

    const following = (await (await fetch(a.at('/users/poet/following'), { headers: AP })).json()) as any;
    expect(following.totalItems).toBe(1);
    const fpage = (await (await fetch(following.first, { headers: AP })).json()) as any;
    // JSON-LD compaction makes a one-item list a plain value (Mastodon reads both).
    expect([fpage.orderedItems].flat()).toEqual([a.at('/users/bob')]);

    // Hidden collections keep their count but list nobody (as Mastodon).
    await poet.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { hide_collections: true } });
    const hidden = (await (await fetch(followers.first, { headers: AP })).json()) as any;
    expect(hidden.orderedItems ?? []).toEqual([]);
  });

  it('reaches the other server as HTML', async () => {
    const poetOnB = await eventually(async () => {
      const acc = await b.services.db.em().findOne(AccountSchema, { uri: a.at('/users/poet') });
      return acc && acc.note.includes('class="mention hashtag"') ? acc : null;
    }, 20_000, 'the Update(Person)');
    expect(poetOnB.note).toContain(`href="${a.at('/tags/Poetry')}"`);
  });
});
