/**
 * The public pages through the real server: the same URL serves a page to a browser, ActivityPub
 * to a peer and JSON to a JSON client; profiles, statuses in their thread, tag pages, the RSS
 * feeds and oEmbed show only what an anonymous visitor may see; a suspended account is a
 * tombstone; a remote account's page sends the visitor to its own URL; a page costs a fixed
 * number of statements.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { parseFeed } from 'htmlparser2';
import { capturedStatements, settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { insertRemoteAccount } from '../../src/services/accounts.ts';
import { defaultAvatarPng } from '../../src/lib/default-images.ts';
import { createManualClock } from '../../src/lib/clock.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
const posts: Record<string, string> = {};

const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const AP = { accept: 'application/activity+json' };
const JSON_CLIENT = { accept: 'application/json' };

async function page(path: string, headers: Record<string, string> = BROWSER): Promise<{ status: number; html: string; res: Response }> {
  const res = await fetch(roost.at(path), { headers, redirect: 'manual' });
  return { status: res.status, html: await res.text(), res };
}

beforeAll(async () => {
  // Every page rendered afresh here; the cache has its own test below.
  roost = await startTestRoost({ instance: { title: 'Perch' }, pages: { cacheSeconds: 0 } });
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
  await alice.api('/api/v1/accounts/update_credentials', {
    method: 'PATCH',
    body: { display_name: 'Alice <Birder>', note: 'I watch **birds** & <b>bees</b>', discoverable: true, fields_attributes: { 0: { name: 'Site', value: 'https://alice.example' } } },
  });
  const post = async (key: string, body: Record<string, unknown>, who: TestUser = alice) => {
    const r = await who.api('/api/v1/statuses', { body });
    expect(r.status).toBe(200);
    posts[key] = r.body.id;
  };
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(await defaultAvatarPng())], { type: 'image/png' }), 'bird.png');
  form.append('description', 'A small grey bird on a branch');
  const media = await alice.api('/api/v1/media', { body: form });
  expect(media.status).toBe(200);
  await post('public', { status: 'Hello #birds, a public post', media_ids: [media.body.id], poll: undefined });
  await post('poll', { status: 'Which #birds?', poll: { options: ['Wren', 'Robin'], expires_in: 3600 } });
  await post('unlisted', { status: 'An unlisted note', visibility: 'unlisted' });
  await post('private', { status: 'SECRET followers-only #birds', visibility: 'private' });
  await post('direct', { status: 'SECRET direct @bob', visibility: 'direct' });
  await post('reply', { status: 'Nice one!', in_reply_to_id: posts.public }, bob);
  await post('privateReply', { status: 'SECRET private reply', in_reply_to_id: posts.public, visibility: 'private' }, bob);
  await settled(roost);
});
afterAll(async () => roost?.close());

describe('content negotiation on the object URLs', () => {
  it('a browser gets the page, a peer the ActivityPub document, a JSON client JSON', async () => {
    for (const path of ['/@alice', '/users/alice']) {
      const html = await page(path);
      expect(html.status).toBe(200);
      expect(html.res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(html.res.headers.get('vary')).toBe('Accept');
      expect(html.html).toContain('<h1 id="profile-name">Alice &lt;Birder&gt;</h1>');
      const ap = await page(path, AP);
      expect(ap.status).toBe(200);
      expect(ap.res.headers.get('content-type')).toMatch(/^application\/activity\+json/);
      expect(JSON.parse(ap.html)).toMatchObject({ type: 'Person', id: roost.at('/users/alice'), preferredUsername: 'alice' });
      const js = await page(path, JSON_CLIENT);
      expect(js.status).toBe(200);
      expect(JSON.parse(js.html)).toMatchObject({ type: 'Person', id: roost.at('/users/alice') });
    }
    for (const path of [`/@alice/${posts.public}`, `/users/alice/statuses/${posts.public}`]) {
      const html = await page(path);
      expect(html.status).toBe(200);
      expect(html.html).toContain('Hello <a href=');
      const ap = await page(path, AP);
      expect(JSON.parse(ap.html)).toMatchObject({ type: 'Note', id: roost.at(`/users/alice/statuses/${posts.public}`) });
      const js = await page(path, JSON_CLIENT);
      expect(JSON.parse(js.html)).toMatchObject({ type: 'Note' });
    }
    // No Accept at all, or curl's */*: the page (Mastodon's default format).
    for (const accept of ['', '*/*']) expect((await page('/@alice', { accept })).res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('the pages are strict: no script, the one stylesheet, a CSP without inline anything', async () => {
    const { html, res } = await page('/@alice');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(html).not.toMatch(/<script|<style| style=/);
    const css = /<link rel="stylesheet" href="(\/assets\/roost\.css\?v=[0-9a-f]{12})">/.exec(html);
    expect(css).not.toBeNull();
    const sheet = await fetch(roost.at(css![1]!));
    expect([sheet.status, sheet.headers.get('content-type'), sheet.headers.get('cache-control')]).toEqual([200, 'text/css; charset=utf-8', 'public, max-age=31536000, immutable']);
    expect(await sheet.text()).toContain('prefers-color-scheme:dark');
    // The existing pages share it.
    const about = await page('/about');
    expect(about.html).toContain(css![1]!);
    expect(about.html).not.toContain('<style');
  });
});

describe('profile page', () => {
  it('shows the header, avatar, bio, fields, counts, public and unlisted posts, landmarks, and never a private or direct one', async () => {
    const { html } = await page('/@alice');
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('<main id="main">');
    expect(html).toMatch(/<img src="[^"]+" alt="Avatar of Alice &lt;Birder&gt;" width="96" height="96">/);
    expect(html).toContain('<dt>Site</dt>');
    expect(html).toContain('&amp;');
    expect(html).toContain('<li><strong>5</strong> posts</li>');
    expect(html).toContain('followers</li>');
    expect(html).toContain('Hello <a href=');
    expect(html).toContain('An unlisted note');
    expect(html).toContain('alt="A small grey bird on a branch"');
    expect(html).toContain('Wren');
    expect(html).not.toContain('SECRET');
    expect(html).toContain('<a href="/about#sign-in">Sign in</a>');
    // Previews: Open Graph and the Twitter card.
    expect(html).toContain('<meta property="og:title" content="Alice &lt;Birder&gt; (@alice@');
    expect(html).toContain(`<meta property="og:url" content="${roost.at('/@alice')}">`);
    expect(html).toContain('<meta property="og:type" content="profile">');
    expect(html).toMatch(/<meta property="og:image" content="[^"]+">/);
    expect(html).toContain('<meta name="twitter:card" content="summary">');
    expect(html).toContain(`<meta property="profile:username" content="alice@${roost.config.domain}">`);
    expect(html).toContain(`<link rel="alternate" type="application/rss+xml" href="${roost.at('/@alice.rss')}"`);
    // Discoverable: no robots meta.
    expect(html).not.toContain('name="robots"');
  });

  it('an account that is not discoverable (noindex) gets the robots meta; hidden collections hide the counts', async () => {
    await bob.api('/api/v1/accounts/update_credentials', { method: 'PATCH', body: { discoverable: false, hide_collections: true } });
    const { html } = await page('/@bob');
    expect(html).toContain('<meta name="robots" content="noindex, noarchive">');
    expect(html).toContain('posts</li>');
    expect(html).not.toContain('followers</li>');
  });

  it('pages older posts with a link', async () => {
    const carol = await createTestUser(roost, 'carol');
    const ids: string[] = [];
    for (let i = 0; i < 22; i++) ids.push((await carol.api('/api/v1/statuses', { body: { status: `post number ${i}` } })).body.id);
    const first = await page('/@carol');
    const older = /<a rel="next" href="([^"]+)">Older posts<\/a>/.exec(first.html);
    expect(older).not.toBeNull();
    expect(older![1]).toBe(roost.at(`/@carol?max_id=${ids[2]}`));
    expect(first.html).toContain('post number 21');
    expect(first.html).not.toContain('post number 1<');
    const second = await page(older![1]!.slice(roost.url.length));
    expect(second.html).toContain('post number 1<');
    expect(second.html).toContain('post number 0<');
    expect(second.html).not.toContain('Older posts');
  });

  it('costs the same number of statements for one post or twenty', async () => {
    const dave = await createTestUser(roost, 'dave');
    await dave.api('/api/v1/statuses', { body: { status: 'one' } });
    const one = await capturedStatements(roost, () => page('/@dave'));
    for (let i = 0; i < 19; i++) await dave.api('/api/v1/statuses', { body: { status: `more ${i}` } });
    const twenty = await capturedStatements(roost, () => page('/@dave'));
    expect(twenty.length).toBe(one.length);
    expect(one.length).toBeLessThanOrEqual(6);
  });
});

describe('statements', () => {
  it('a status page and a tag page cost the same whether the thread or the tag holds one post or many', async () => {
    const gus = await createTestUser(roost, 'gus');
    const root = (await gus.api('/api/v1/statuses', { body: { status: 'root of #gusthread' } })).body.id;
    const reply = async (i: number) => gus.api('/api/v1/statuses', { body: { status: `reply ${i} #gusthread`, in_reply_to_id: root } });
    await reply(0);
    const thread1 = await capturedStatements(roost, () => page(`/@gus/${root}`));
    const tag1 = await capturedStatements(roost, () => page('/tags/gusthread'));
    for (let i = 1; i < 8; i++) await reply(i);
    const thread8 = await capturedStatements(roost, () => page(`/@gus/${root}`));
    const tag8 = await capturedStatements(roost, () => page('/tags/gusthread'));
    expect((await page(`/@gus/${root}`)).html).toContain('reply 7');
    expect(thread8.length).toBe(thread1.length);
    expect(tag8.length).toBe(tag1.length);
    expect(thread1.length).toBeLessThanOrEqual(7);
    expect(tag1.length).toBeLessThanOrEqual(4);
  });
});

describe('status page', () => {
  it('shows the status with its thread an anonymous visitor may see, with previews and the oEmbed link', async () => {
    const { html } = await page(`/@alice/${posts.public}`);
    expect(html).toContain('Nice one!');
    expect(html).not.toContain('SECRET');
    expect(html).toContain('<h2 id="replies">Replies</h2>');
    expect(html).toContain('<meta property="og:type" content="article">');
    expect(html).toContain('<meta property="og:description" content="Hello #birds, a public post [1 attachment]">');
    expect(html).toContain('<meta property="og:image:alt" content="A small grey bird on a branch">');
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image">');
    expect(html).toContain(`<link rel="alternate" type="application/json+oembed" href="${roost.at(`/api/oembed?url=${encodeURIComponent(roost.at(`/@alice/${posts.public}`))}`)}">`);
    // The reply's page shows what it answers.
    const reply = await page(`/@bob/${posts.reply}`);
    expect(reply.html).toContain('<h2 id="earlier">Earlier in the thread</h2>');
    expect(reply.html).toContain('Hello <a href=');
  });

  it('a boost\'s page sends the visitor to the original', async () => {
    const boost = await bob.api(`/api/v1/statuses/${posts.public}/reblog`, { method: 'POST' });
    const r = await page(`/@bob/${boost.body.id}`);
    expect([r.status, r.res.headers.get('location')]).toEqual([302, roost.at(`/@alice/${posts.public}`)]);
    // On the booster's profile it shows as a boost of alice's post.
    expect((await page('/@bob')).html).toMatch(/<p class="boosted"><a href="[^"]+\/@bob">bob<\/a> boosted<\/p>/);
  });

  it('poll results', async () => {
    await bob.api(`/api/v1/polls/${(await alice.api(`/api/v1/statuses/${posts.poll}`)).body.poll.id}/votes`, { body: { choices: [1] } });
    const { html } = await page(`/@alice/${posts.poll}`);
    expect(html).toContain('<progress max="100" value="100" aria-label="Robin: 100%">');
    expect(html).toContain('1 vote');
  });

  it('a followers-only or direct post is a 404 page, on every URL, and on nobody else\'s path', async () => {
    for (const path of [`/@alice/${posts.private}`, `/users/alice/statuses/${posts.private}`, `/@alice/${posts.direct}`, `/@bob/${posts.public}`, '/@alice/123', '/@alice/abc', '/@nobody', '/@al%00ice', '/users/%00', `/users/al%00ice/statuses/${posts.public}`]) {
      const { status, html, res } = await page(path);
      expect([path, status, res.headers.get('content-type')]).toEqual([path, 404, 'text/html; charset=utf-8']);
      expect(html).toContain('<h1>Not found</h1>');
      expect(html).not.toContain('SECRET');
    }
  });
});

describe('tag page', () => {
  it('lists the public posts with the tag, paged, never followers-only ones', async () => {
    const { status, html } = await page('/tags/birds');
    expect(status).toBe(200);
    expect(html).toContain('<h1>#birds</h1>');
    expect(html).toContain('Hello <a href=');
    expect(html).toContain('Which <a href=');
    expect(html).not.toContain('SECRET');
    expect((await page('/tags/nothing-here')).html).toContain('No public posts with this tag');
  });
});

describe('suspended and remote accounts', () => {
  it('a suspended account is a tombstone (410) on its profile and status URLs', async () => {
    const erin = await createTestUser(roost, 'erin');
    const s = (await erin.api('/api/v1/statuses', { body: { status: 'before the fall' } })).body.id;
    await roost.services.db.sql.query(`update accounts set suspended_at = now() where id = $1`, [erin.account.id]);
    for (const path of ['/@erin', '/users/erin', `/@erin/${s}`]) {
      const { status, html } = await page(path);
      expect([path, status]).toEqual([path, 410]);
      expect(html).toContain('@erin is suspended');
      expect(html).not.toContain('before the fall');
      expect(html).toContain('<meta name="robots" content="noindex, noarchive">');
    }
    expect((await page('/@erin.rss')).status).toBe(404);
  });

  it('a remote account\'s page redirects to its own URL, unless its domain is suspended', async () => {
    await insertRemoteAccount(roost.services, { username: 'finch', domain: 'remote.example', uri: 'https://remote.example/users/finch', url: 'https://remote.example/@finch' });
    const r = await page('/@finch@remote.example');
    expect([r.status, r.res.headers.get('location')]).toEqual([302, 'https://remote.example/@finch']);
    await roost.services.db.sql.query(`insert into instance_domain_blocks (id, domain, severity, created_at, updated_at) values ($1, 'remote.example', 'suspend', now(), now())`, [roost.services.ids.next()]);
    roost.services.domainPolicy.invalidate();
    expect((await page('/@finch@remote.example')).status).toBe(404);
  });
});

describe('feeds and oEmbed', () => {
  it('/@user.rss is RSS 2.0 of public posts only', async () => {
    const res = await fetch(roost.at('/@alice.rss'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8');
    const xml = await res.text();
    const feed = parseFeed(xml, { xmlMode: true })!;
    expect(feed.type).toBe('rss');
    expect(feed.title).toBe('Alice <Birder>');
    expect(feed.link).toBe(roost.at('/@alice'));
    const links = feed.items.map((i) => i.link);
    expect(links).toContain(roost.at(`/@alice/${posts.public}`));
    expect(links).toContain(roost.at(`/@alice/${posts.poll}`));
    expect(links).not.toContain(roost.at(`/@alice/${posts.unlisted}`));
    expect(xml).not.toContain('SECRET');
    const item = feed.items.find((i) => i.link === roost.at(`/@alice/${posts.public}`))!;
    expect(item.description).toContain('Hello <a href=');
    expect(item.pubDate).toBeInstanceOf(Date);
    expect(item.media[0]).toMatchObject({ medium: 'image' });
    expect(xml).toContain('<media:description type="plain">A small grey bird on a branch</media:description>');
    expect(xml).toContain('<category>birds</category>');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<rss version="2.0"/);
  });

  it('/tags/:name.rss is RSS 2.0 of the tag\'s public posts', async () => {
    const xml = await (await fetch(roost.at('/tags/birds.rss'))).text();
    const feed = parseFeed(xml, { xmlMode: true })!;
    expect(feed.title).toBe('#birds');
    expect(feed.items.map((i) => i.link).sort()).toEqual([roost.at(`/@alice/${posts.public}`), roost.at(`/@alice/${posts.poll}`)].sort());
  });

  it('oEmbed answers for a status URL in Mastodon\'s shape and 404s for anything else', async () => {
    for (const url of [roost.at(`/@alice/${posts.public}`), roost.at(`/users/alice/statuses/${posts.public}`)]) {
      const r = await fetch(roost.at(`/api/oembed?url=${encodeURIComponent(url)}`));
      expect(r.status).toBe(200);
      const body = (await r.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        type: 'rich',
        version: '1.0',
        author_name: 'Alice <Birder>',
        author_url: roost.at('/@alice'),
        provider_name: roost.config.domain,
        provider_url: roost.at('/'),
        width: 400,
        height: null,
      });
      expect(body.html).toContain('<blockquote class="roost-embed"');
      expect(body.html).toContain('Hello #birds, a public post');
      expect(body.html).toContain(`<a href="${roost.at(`/@alice/${posts.public}`)}">`);
    }
    for (const url of [roost.at('/@alice'), roost.at(`/@alice/${posts.private}`), `https://elsewhere.example/@alice/${posts.public}`, roost.at(`/@%ZZ/${posts.public}`), roost.at(`/@al%00ice/${posts.public}`), 'not a url', '']) {
      const r = await fetch(roost.at(`/api/oembed?url=${encodeURIComponent(url)}`));
      expect([url, r.status, await r.json()]).toEqual([url, 404, { error: 'Record not found' }]);
    }
  });
});

describe('the page cache', () => {
  it('serves a page again from memory for pages.cacheSeconds on the instance clock, with no statement', async () => {
    const clock = createManualClock(new Date());
    const cached = await startTestRoost({ pages: { cacheSeconds: 10 } }, { clock });
    try {
      const zed = await createTestUser(cached, 'zed');
      await zed.api('/api/v1/statuses', { body: { status: 'first words' } });
      const get = async (path: string) => (await fetch(cached.at(path), { headers: BROWSER })).text();
      expect(await get('/@zed')).toContain('first words');
      await zed.api('/api/v1/statuses', { body: { status: 'second words' } });
      let html = '';
      const statements = await capturedStatements(cached, async () => (html = await get('/users/zed')));
      expect(statements).toEqual([]);
      expect(html).not.toContain('second words');
      // Another page of the profile is another page.
      expect(await get(`/@zed?max_id=999999999999999999`)).toContain('second words');
      clock.advance(10_001);
      expect(await get('/@zed')).toContain('second words');
    } finally {
      await cached.close();
    }
  });
});
