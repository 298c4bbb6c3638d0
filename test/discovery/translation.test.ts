/**
 * Translation through a LibreTranslate-compatible server: a stand-in on loopback answers
 * /languages and /translate as LibreTranslate does. POST /api/v1/statuses/:id/translate sends
 * every text of the status at once and answers Mastodon's Translation; the languages come from
 * the server (kept, not asked again); translation.enabled follows the configuration; no server, a
 * failing one or a status that may not be translated answer Mastodon's errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

let r: TestRoost;
let bare: TestRoost;
let standIn: http.Server;
let alice: TestUser;
let bob: TestUser;
const received: { path: string; body: any }[] = [];
let failing = false;

beforeAll(async () => {
  standIn = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : null;
      received.push({ path: `${req.method} ${req.url}`, body });
      if (failing) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
        return;
      }
      if (req.url === '/languages') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify([
            { code: 'en', name: 'English', targets: ['en', 'fr', 'de'] },
            { code: 'fr', name: 'French', targets: ['en', 'fr'] },
          ]),
        );
      } else if (req.url === '/translate') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({ translatedText: body.q.map((t: string) => (t ? `[${body.target}] ${t}` : '')), detectedLanguage: { confidence: 90, language: 'en' } }),
        );
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
  [r, bare] = await Promise.all([startTestRoost({ translation: { url, apiKey: 'sekrit' } }), startTestRoost()]);
  alice = await createTestUser(r, 'alice');
  bob = await createTestUser(r, 'bob');
});
afterAll(async () => {
  standIn?.close();
  await Promise.all([r?.close(), bare?.close()]);
});

describe('translation', () => {
  it('says it is enabled when a server is configured', async () => {
    expect((await apiRequest(r, '/api/v2/instance')).body.configuration.translation).toEqual({ enabled: true });
    expect((await apiRequest(bare, '/api/v2/instance')).body.configuration.translation).toEqual({ enabled: false });
  });

  it('lists the languages the server offers, asking it once', async () => {
    const before = received.filter((x) => x.path === 'GET /languages').length;
    for (let i = 0; i < 2; i++) {
      const res = await apiRequest(r, '/api/v1/instance/translation_languages');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ en: ['fr', 'de'], fr: ['en'] });
    }
    expect(received.filter((x) => x.path === 'GET /languages').length - before).toBe(1);
    expect((await apiRequest(bare, '/api/v1/instance/translation_languages')).body).toEqual({});
  });

  it('translates the content, content warning, media descriptions and poll options', async () => {
    const posted = await bob.api('/api/v1/statuses', {
      body: { status: 'Hello <world>', spoiler_text: 'a warning', language: 'en', poll: { options: ['yes', 'no'], expires_in: 3600 } },
    });
    expect(posted.status).toBe(200);
    await r.services.db.sql.query(
      `insert into media_attachments (id, account_id, status_id, position, type, description, created_at, updated_at)
       values (77, $1, $2, 0, 'image', 'a bird on a wire', now(), now())`,
      [bob.account.id, posted.body.id],
    );
    const res = await alice.api(`/api/v1/statuses/${posted.body.id}/translate`, { body: { lang: 'fr' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      content: `[fr] ${posted.body.content}`,
      spoiler_text: '[fr] a warning',
      language: 'fr',
      poll: { id: posted.body.poll.id, options: [{ title: '[fr] yes' }, { title: '[fr] no' }] },
      media_attachments: [{ id: '77', description: '[fr] a bird on a wire' }],
      detected_source_language: 'en',
      provider: 'LibreTranslate',
    });
    const sent = received.filter((x) => x.path === 'POST /translate').at(-1)!.body;
    expect(sent).toEqual({ q: [posted.body.content, 'a warning', 'a bird on a wire', 'yes', 'no'], source: 'en', target: 'fr', format: 'html', api_key: 'sekrit' });
    // A reblog translates its original; without lang, the user's locale (or en).
    const reblog = await alice.api(`/api/v1/statuses/${posted.body.id}/reblog`, { method: 'POST' });
    const viaReblog = await alice.api(`/api/v1/statuses/${reblog.body.id}/translate`, { method: 'POST' });
    expect(viaReblog.body.content).toBe(`[en] ${posted.body.content}`);
  });

  it('answers 503 when the server fails or none is configured, 403 for a private status, 404 for one not seen', async () => {
    const posted = await bob.api('/api/v1/statuses', { body: { status: 'Bonjour', language: 'fr' } });
    failing = true;
    try {
      expect(await alice.api(`/api/v1/statuses/${posted.body.id}/translate`, { body: { lang: 'en' } })).toMatchObject({
        status: 503,
        body: { error: 'Service Unavailable' },
      });
    } finally {
      failing = false;
    }
    const priv = await bob.api('/api/v1/statuses', { body: { status: 'private words', visibility: 'private' } });
    expect((await bob.api(`/api/v1/statuses/${priv.body.id}/translate`, { body: { lang: 'fr' } })).status).toBe(403);
    expect((await alice.api(`/api/v1/statuses/${priv.body.id}/translate`, { body: { lang: 'fr' } })).status).toBe(404);
    const carol = await createTestUser(bare, 'carol');
    const elsewhere = await carol.api('/api/v1/statuses', { body: { status: 'no translator here' } });
    expect(await carol.api(`/api/v1/statuses/${elsewhere.body.id}/translate`, { body: { lang: 'fr' } })).toMatchObject({
      status: 503,
      body: { error: 'Service Unavailable' },
    });
  });
});
