/**
 * The discovery surface through the real server: instance API v1/v2 and sub-resources, NodeInfo
 * 2.0 validated against its JSON Schema, host-meta, the thumbnail, and the JSON error shapes.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import AjvDraft04Module from 'ajv-draft-04';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, apiRequest } from '../helpers/auth.ts';
import { recordUserActivity } from '../../src/services/accounts.ts';

let roost: TestRoost;

beforeAll(async () => {
  roost = await startTestRoost({
    instance: {
      title: 'Test Roost',
      shortDescription: 'A test server.',
      description: 'Longer *story*.',
      contactEmail: 'admin@example.test',
      rules: ['Be kind', { text: 'No spam', hint: 'ads count' }],
      statusPageUrl: 'https://status.example.test',
    },
    registrations: { mode: 'approval', message: 'Ask **first**' },
  });
});
afterAll(async () => roost?.close());

describe('instance API', () => {
  it('GET /api/v2/instance carries the configuration and the mission additions', async () => {
    const owner = await createTestUser(roost, 'owner', { role: 'Owner' });
    const { status, body, headers } = await apiRequest(roost, '/api/v2/instance');
    expect(status).toBe(200);
    expect(headers.get('access-control-allow-origin')).toBe('*');
    expect(body.domain).toBe(roost.config.domain);
    expect(body.title).toBe('Test Roost');
    expect(body.version).toBe('4.3.0 (compatible; Roost 0.1.0)');
    expect(body.description).toBe('A test server.');
    expect(body.registrations).toEqual({
      enabled: true,
      approval_required: true,
      reason_required: true,
      message: null,
      url: null,
      min_age: null,
    });
    expect(body.configuration.vapid.public_key).toBe(roost.services.secrets.vapidPublicKey);
    expect(body.configuration.accounts.max_featured_tags).toBe(10);
    expect(body.configuration.translation).toEqual({ enabled: false });
    expect(body.configuration.urls.streaming).toBe(roost.url.replace('http', 'ws'));
    expect(body.configuration.urls.status).toBe('https://status.example.test');
    expect(body.thumbnail.url).toBe(roost.at('/thumbnail.png'));
    expect(body.thumbnail.versions).toEqual({ '@1x': roost.at('/thumbnail.png'), '@2x': roost.at('/thumbnail@2x.png') });
    expect(body.thumbnail.blurhash).toMatch(/^[0-9A-Za-z#$%*+,-.:;=?@[\]^_{|}~]{36}$/);
    expect(body.contact.email).toBe('admin@example.test');
    expect(body.contact.account.id).toBe(owner.account.id);
    expect(body.contact.account.username).toBe('owner');
    expect(body.rules).toEqual([
      { id: '1', text: 'Be kind', hint: '', translations: {} },
      { id: '2', text: 'No spam', hint: 'ads count', translations: {} },
    ]);
    expect(body.usage.users.active_month).toBe(0);
  });

  it('GET /api/v1/instance has the v1 shape with short_description and approval_required', async () => {
    const { status, body } = await apiRequest(roost, '/api/v1/instance');
    expect(status).toBe(200);
    expect(body.uri).toBe(roost.config.domain);
    expect(body.short_description).toBe('A test server.');
    expect(body.approval_required).toBe(true);
    expect(body.registrations).toBe(true);
    expect(body.urls).toEqual({ streaming_api: roost.url.replace('http', 'ws'), status: 'https://status.example.test' });
    expect(body.configuration.accounts.max_featured_tags).toBe(10);
    expect(body.thumbnail).toBe(roost.at('/thumbnail.png'));
    expect(typeof body.stats.user_count).toBe('number');
  });

  it('serves rules, extended description, privacy policy, peers, activity and languages', async () => {
    expect((await apiRequest(roost, '/api/v1/instance/rules')).body).toHaveLength(2);
    const ext = await apiRequest(roost, '/api/v1/instance/extended_description');
    // A configured description has a time: when Roost first saw this text (services/configured-texts.ts).
    expect(ext.body).toEqual({ updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), content: '<p>Longer <em>story</em>.</p>\n' });
    const policy = await apiRequest(roost, '/api/v1/instance/privacy_policy');
    expect(policy.status).toBe(200);
    expect(policy.body.content).toContain(roost.config.domain);
    expect((await apiRequest(roost, '/api/v1/instance/peers')).body).toEqual([]);
    const activity = await apiRequest(roost, '/api/v1/instance/activity');
    expect(activity.body).toHaveLength(12);
    expect(Object.keys(activity.body[0]).sort()).toEqual(['logins', 'registrations', 'statuses', 'week']);
    expect(typeof activity.body[0].week).toBe('string');
    const langs = await apiRequest(roost, '/api/v1/instance/languages');
    expect(langs.body).toContainEqual({ code: 'en', name: 'English' });
  });

  it('serves the thumbnail as a PNG', async () => {
    const res = await fetch(roost.at('/thumbnail.png'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  });
});

describe('NodeInfo 2.0', () => {
  const schema = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../fixtures/nodeinfo-2.0.schema.json'), 'utf8'));
  const validate = new AjvDraft04Module.default({ allErrors: true }).compile(schema);

  it('is linked from /.well-known/nodeinfo', async () => {
    const { body } = await apiRequest(roost, '/.well-known/nodeinfo');
    expect(body.links).toContainEqual({ rel: 'http://nodeinfo.diaspora.software/ns/schema/2.0', href: roost.at('/nodeinfo/2.0') });
  });

  it('validates against the schema and counts users, activity and posts', async () => {
    const u = await createTestUser(roost, 'counted');
    await recordUserActivity(roost.services, u.user.id);
    const res = await fetch(roost.at('/nodeinfo/2.0'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = (await res.json()) as any;
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.version).toBe('2.0');
    expect(doc.software).toEqual({ name: 'roost', version: '0.1.0' });
    expect(doc.protocols).toEqual(['activitypub']);
    expect(doc.services).toEqual({ inbound: [], outbound: [] });
    expect(doc.openRegistrations).toBe(true);
    expect(doc.usage.users.total).toBeGreaterThanOrEqual(2);
    expect(doc.usage.users.activeMonth).toBe(1);
    expect(doc.usage.users.activeHalfyear).toBe(1);
    expect(doc.usage.localPosts).toBe(0);
    expect(doc.metadata.nodeName).toBe('Test Roost');
    expect(doc.metadata.nodeDescription).toBe('A test server.');
  });
});

describe('discovery and errors', () => {
  it('serves host-meta pointing at WebFinger', async () => {
    const res = await fetch(roost.at('/.well-known/host-meta'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/xrd+xml; charset=utf-8');
    expect(await res.text()).toContain(`template="${roost.url}/.well-known/webfinger?resource={uri}"`);
  });

  it('answers an unknown route with a JSON 404', async () => {
    const res = await apiRequest(roost, '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Record not found' });
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await apiRequest(roost, '/api/v1/instance', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toContain('GET');
  });
});
