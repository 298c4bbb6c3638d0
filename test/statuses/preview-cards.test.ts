/**
 * Preview cards against a local web server standing in for the outside world: a status's first
 * link (not a local one) gets its card in the background — never in the request — through the
 * bounded fetcher, cached per URL and shared; oEmbed read first (its video iframe sanitised); an
 * edit of the text fetches again (or drops the card); hostile pages (too large, slow, not HTML, no title, gone, endless redirects, markup in
 * the tags, a private address when those are refused) give no card and break nothing.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';
import { FETCH_CARD_JOB, fetchPreviewCard, previewCardUrl, previewCardUrlFromHtml } from '../../src/services/preview-cards.ts';
import { sanitizeRemoteHtml } from '../../src/lib/sanitize.ts';

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let site: http.Server;
let base: string;
const hits = new Map<string, number>();

const ARTICLE = `<!doctype html><html lang="de"><head><meta charset="utf-8"><title>Fallback title</title>
<meta property="og:title" content="A &amp; B: the article">
<meta property="og:description" content="What it is about">
<meta property="og:image" content="/img/cover.png">
<meta property="og:image:width" content="640"><meta property="og:image:height" content="480">
<meta property="og:site_name" content="Fake News Site">
<meta property="og:locale" content="en_GB">
<meta name="author" content="Ada Lovelace">
<meta property="article:published_time" content="2026-11-01T10:00:00Z">
<script>alert(1)</script></head><body><img src="https://elsewhere.example/pic.png"><p>Body</p></body></html>`;

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const page = (status: number, body: string, type = 'text/html; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    switch (path) {
      case '/article':
        return page(200, ARTICLE);
      case '/plain':
        return page(200, `<html><head><title> Plain  page </title><meta name="description" content="Just a page"></head><body><img src="/x.png"></body></html>`);
      case '/redirect':
        res.writeHead(302, { location: '/plain' });
        return res.end();
      case '/loop':
        res.writeHead(301, { location: '/loop' });
        return res.end();
      case '/huge':
        return page(200, `<html><head><meta property="og:title" content="Huge"></head><body>${'x'.repeat(1024 * 1024)}</body></html>`);
      case '/json':
        return page(200, JSON.stringify({ title: 'not html' }), 'application/json');
      case '/notitle':
        return page(200, '<html><head><meta property="og:description" content="no title here"></head></html>');
      case '/gone':
        return page(404, '<html><head><meta property="og:title" content="Gone"></head></html>');
      case '/markup':
        return page(
          200,
          `<html><head><meta property="og:title" content="&lt;script&gt;alert(1)&lt;/script&gt;Safe &lt;b&gt;title&lt;/b&gt;">
           <meta property="og:image" content="javascript:alert(1)"><meta property="og:description" content="&lt;img src=x onerror=alert(1)&gt;text"></head></html>`,
        );
      case '/video':
        return page(200, `<html><head><title>Video page</title><meta property="og:title" content="OG video title">
          <link rel="alternate" type="application/json+oembed" href="/oembed/video.json"></head></html>`);
      case '/oembed/video.json':
        return page(200, JSON.stringify({
          version: '1.0', type: 'video', title: 'A video', author_name: 'Vid Author', author_url: '/@vid', provider_name: 'VidSite',
          provider_url: '/', width: 480, height: 270, thumbnail_url: '/thumb.jpg',
          html: '<iframe src="https://player.example/embed/1" width="480" height="270" onload="alert(1)" allowfullscreen frameborder="0"></iframe><script>alert(1)</script>',
        }), 'application/json');
      case '/photo':
        return page(200, `<link rel="alternate" type="application/json+oembed" href="${base}/oembed/photo.json"><title>Photo page</title>`);
      case '/oembed/photo.json':
        return page(200, JSON.stringify({ version: '1.0', type: 'photo', title: 'A photo', url: '/photos/1.jpg', width: 1024, height: 427, provider_name: 'PicSite' }), 'application/json');
      case '/rich':
        return page(200, `<html><head><meta property="og:title" content="Rich page OG">
          <link rel="alternate" type="application/json+oembed" href="/oembed/rich.json"></head></html>`);
      case '/oembed/rich.json':
        return page(200, JSON.stringify({ version: '1.0', type: 'rich', title: 'Rich', html: '<script>alert(1)</script>' }), 'application/json');
      case '/slow':
        return; // never answers
      default:
        return page(404, 'not found');
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  roost = await startTestRoost();
  alice = await createTestUser(roost, 'alice');
  bob = await createTestUser(roost, 'bob');
}, 60_000);
afterAll(async () => {
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
  await roost?.close();
});

const post = (u: TestUser, status: string) => u.api('/api/v1/statuses', { method: 'POST', body: { status } });
const cardJobs = async (r: TestRoost) =>
  (await r.services.db.sql.query<{ n: number }>(`select count(*)::int as n from jobs where kind = $1`, [FETCH_CARD_JOB]))[0]!.n;
/** The card of a status once it has one (bounded wait). */
const cardOf = (id: string) =>
  eventually(async () => (await apiRequest(roost, `/api/v1/statuses/${id}`)).body.card, 15_000, `the card of ${id}`);

function articleCard() {
  return {
    url: `${base}/article`,
    title: 'A & B: the article',
    description: 'What it is about',
    language: 'en',
    type: 'link',
    author_name: 'Ada Lovelace',
    author_url: '',
    provider_name: 'Fake News Site',
    provider_url: '',
    html: '',
    width: 640,
    height: 480,
    image: `${base}/img/cover.png`,
    image_description: '',
    embed_url: '',
    blurhash: null,
    published_at: '2026-11-01T10:00:00.000Z',
    authors: [{ name: 'Ada Lovelace', url: '', account: null }],
  };
}

function plainCard(url: string) {
  return {
    url,
    title: 'Plain page',
    description: 'Just a page',
    language: null,
    type: 'link',
    author_name: '',
    author_url: '',
    provider_name: '',
    provider_url: '',
    html: '',
    width: 0,
    height: 0,
    image: null,
    image_description: '',
    embed_url: '',
    blurhash: null,
    published_at: null,
    authors: [{ name: '', url: '', account: null }],
  };
}

describe('preview cards', () => {
  it('fetches the first link in the background, caches it per URL, and renders it as card', async () => {
    const created = await post(alice, `Read @bob #news ${roost.url}/@alice/1 then ${base}/article and ${base}/plain`);
    expect([created.status, created.body.card]).toEqual([200, null]); // never fetched in the request
    const s = created.body;
    expect(await cardOf(s.id)).toEqual(articleCard());
    // Everywhere a status renders: an account's statuses, a reblog's original (the reblog has none of its own).
    const listed = (await apiRequest(roost, `/api/v1/accounts/${alice.account.id}/statuses`)).body;
    expect(listed[0].card).toEqual(articleCard());
    const boost = (await bob.api(`/api/v1/statuses/${s.id}/reblog`, { method: 'POST' })).body;
    expect([boost.card, boost.reblog.card]).toEqual([null, articleCard()]);

    // The same link again: the cached card, no second fetch.
    const again = (await post(bob, `also ${base}/article`)).body;
    expect(await cardOf(again.id)).toEqual(articleCard());
    expect(hits.get('/article')).toBe(1);
    expect((await roost.services.db.sql.query(`select url from preview_cards where url = $1`, [`${base}/article`])).length).toBe(1);

    // An edit of the text fetches the new first link (the card shows the link as written, found after a redirect).
    const edited = await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: `now ${base}/redirect` } });
    expect([edited.status, edited.body.card]).toEqual([200, null]);
    expect(await cardOf(s.id)).toEqual(plainCard(`${base}/redirect`));
    const [stored] = await roost.services.db.sql.query<{ url: string; link: string }>(
      `select pc.url, pcs.url as link from preview_cards_statuses pcs join preview_cards pc on pc.id = pcs.preview_card_id where pcs.status_id = $1`,
      [s.id],
    );
    expect(stored).toEqual({ url: `${base}/plain`, link: `${base}/redirect` });
    // The same link again finds that card without fetching.
    const viaRedirect = (await post(bob, `and ${base}/redirect`)).body;
    expect(await cardOf(viaRedirect.id)).toEqual(plainCard(`${base}/redirect`));
    expect([hits.get('/redirect'), hits.get('/plain')]).toEqual([1, 1]);
    // An edit that keeps the text keeps the card; one without a link drops it.
    expect((await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: `now ${base}/redirect`, spoiler_text: 'cw' } })).body.card).toEqual(
      plainCard(`${base}/redirect`),
    );
    expect((await alice.api(`/api/v1/statuses/${s.id}`, { method: 'PUT', body: { status: 'no link any more' } })).body.card).toBeNull();
    await eventually(async () => (await cardJobs(roost)) === 0, 15_000, 'the card jobs to finish');
    expect((await apiRequest(roost, `/api/v1/statuses/${s.id}`)).body.card).toBeNull();

    // A text with only local links (or none) queues nothing.
    await post(alice, `mine: ${roost.url}/@alice and #tags @bob`);
    expect(await cardJobs(roost)).toBe(0);
  });

  it('reads oEmbed first (a video with its sanitised iframe, a photo), OpenGraph for rich ones', async () => {
    const video = (await post(alice, `watch ${base}/video`)).body;
    const photo = (await post(alice, `see ${base}/photo`)).body;
    const rich = (await post(alice, `rich ${base}/rich`)).body;
    const empty = { description: '', language: null, image_description: '', blurhash: null, published_at: null };
    expect(await cardOf(video.id)).toEqual({
      ...empty,
      url: `${base}/video`,
      title: 'A video',
      type: 'video',
      author_name: 'Vid Author',
      author_url: `${base}/@vid`,
      provider_name: 'VidSite',
      provider_url: `${base}/`,
      html:
        '<iframe src="https://player.example/embed/1" width="480" height="270" allowfullscreen frameborder="0" ' +
        'sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-forms"></iframe>',
      width: 480,
      height: 270,
      image: `${base}/thumb.jpg`,
      embed_url: '',
      authors: [{ name: 'Vid Author', url: `${base}/@vid`, account: null }],
    });
    expect(await cardOf(photo.id)).toEqual({
      ...empty,
      url: `${base}/photo`,
      title: 'A photo',
      type: 'photo',
      author_name: '',
      author_url: '',
      provider_name: 'PicSite',
      provider_url: '',
      html: '',
      width: 1024,
      height: 427,
      image: `${base}/photos/1.jpg`,
      embed_url: `${base}/photos/1.jpg`,
      authors: [{ name: '', url: '', account: null }],
    });
    const richCard = await cardOf(rich.id);
    expect([richCard.type, richCard.title, richCard.html]).toEqual(['link', 'Rich page OG', '']);
  });

  it('picks the first link that is not on this server', () => {
    const local = ['roost.example', 'roost.example:3000'];
    const cases: [string, string | null][] = [
      ['see https://a.example/x and https://b.example/y', 'https://a.example/x'],
      ['mine https://roost.example:3000/@me/1 then http://c.example/', 'http://c.example/'],
      ['https://roost.example/tags/x only', null],
      ['@someone@elsewhere.example #tag', null],
      ['ftp://files.example/x and (https://d.example/p).', 'https://d.example/p'],
    ];
    expect(cases.map(([text]) => [text, previewCardUrl(text, local)])).toEqual(cases);
    // A remote status's HTML: hashtag and mention links are skipped, as Mastodon does.
    const html =
      '<p><a href="https://remote.example/tags/x" class="mention hashtag" rel="tag">#x</a> ' +
      '<span class="h-card"><a href="https://remote.example/@ann" class="u-url mention">@ann</a></span> ' +
      '<a href="https://remote.example/@bob">@bob</a> <a href="https://roost.example/@me/1">mine</a> ' +
      '<a href="https://news.example/a?b=1&amp;c=2" rel="nofollow noopener">news</a> <a href="https://later.example/">later</a></p>';
    expect(previewCardUrlFromHtml(html, local, ['https://remote.example/@bob'])).toBe('https://news.example/a?b=1&c=2');
    expect(previewCardUrlFromHtml('<p><a href="javascript:alert(1)">x</a> <a rel="tag" href="https://t.example/">#t</a></p>', local)).toBeNull();
    // As Roost stores it: the sanitiser replaced rel, the classes say what the links are.
    const stored = sanitizeRemoteHtml(html);
    expect(stored).toContain('<a href="https://remote.example/tags/x" rel="nofollow noopener" target="_blank" class="mention hashtag">');
    expect(previewCardUrlFromHtml(stored, local, ['https://remote.example/@bob'])).toBe('https://news.example/a?b=1&c=2');
    expect(previewCardUrlFromHtml(sanitizeRemoteHtml('<p><a href="https://remote.example/tags/x" class="mention hashtag" rel="tag">#x</a></p>'), local)).toBeNull();
    // A class that merely contains the word is no mention.
    expect(previewCardUrlFromHtml('<p><a href="https://e.example/" class="hashtags-page">x</a></p>', local)).toBe('https://e.example/');
  });

  it('makes no card of hostile or useless pages, and keeps serving', async () => {
    const paths = ['/huge', '/json', '/notitle', '/gone', '/loop', '/markup'];
    const ids: string[] = [];
    for (const p of paths) ids.push((await post(alice, `hostile ${base}${p}`)).body.id);
    await eventually(async () => (await cardJobs(roost)) === 0, 15_000, 'the card jobs to finish');
    const cards = await Promise.all(ids.map(async (id) => (await apiRequest(roost, `/api/v1/statuses/${id}`)).body.card));
    // Markup in the tags is text, a javascript: image is no image.
    expect(cards.map((c, i) => [paths[i], c && { title: c.title, description: c.description, image: c.image }])).toEqual([
      ['/huge', null],
      ['/json', null],
      ['/notitle', null],
      ['/gone', null],
      ['/loop', null],
      ['/markup', { title: 'Safe title', description: 'text', image: null }],
    ]);
    // A page that never answers is given up at the deadline.
    const slow = (await post(alice, `slow ${base}/slow`)).body.id;
    expect(await fetchPreviewCard(roost.services, slow, { timeoutMs: 300 })).toBeNull();
    expect((await apiRequest(roost, `/api/v1/statuses/${slow}`)).body.card).toBeNull();
    expect((await apiRequest(roost, '/health')).status).toBe(200);
  });

  it('refuses private addresses unless they are allowed', async () => {
    const guarded = await startTestRoost({ federation: { allowPrivateAddresses: false } });
    try {
      const carol = await createTestUser(guarded, 'carol');
      const before = hits.get('/plain') ?? 0;
      const s = (await carol.api('/api/v1/statuses', { method: 'POST', body: { status: `look ${base}/plain` } })).body;
      await eventually(async () => (await cardJobs(guarded)) === 0, 15_000, 'the card job to finish');
      expect((await apiRequest(guarded, `/api/v1/statuses/${s.id}`)).body.card).toBeNull();
      expect(await fetchPreviewCard(guarded.services, s.id)).toBeNull();
      expect(hits.get('/plain') ?? 0).toBe(before);
    } finally {
      await guarded.close();
    }
  });
});
