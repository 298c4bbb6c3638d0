import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, ConfigError } from '../config/index.ts';
import { loadOrCreateSecrets } from '../config/secrets.ts';

/** Temporary directories, removed after the file's tests. */
const made: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const cwd = tempDir('roost-config-');

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({ env: {}, cwd });
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(3000);
    expect(c.domain).toBe('localhost:3000');
    expect(c.publicUrl).toBe('http://localhost:3000');
    expect(c.dataDir).toBe(path.join(cwd, 'data'));
    expect(c.databaseUrl).toBeUndefined();
    expect(c.registrations).toEqual({ mode: 'open', message: null });
    expect(c.federation).toEqual({
      mode: 'open',
      allowPrivateAddresses: false,
      authorizedFetch: false,
      deliveryTimeoutSeconds: 10,
      deliveryConcurrency: 64,
      circuitFailures: 10,
      circuitSpanSeconds: 604_800,
      circuitProbeSeconds: 3600,
      mentionLookupTimeoutSeconds: 5,
      threadFetchMaxStatuses: 1000,
      threadFetchMaxPages: 500,
      threadFetchMaxDepth: 100,
      threadFetchTimeoutSeconds: 60,
      threadFetchHostRate: 5,
      threadFetchCooldownSeconds: 900,
      resolveTimeoutSeconds: 10,
    });
    expect(c.translation).toEqual({ url: null, apiKey: null });
    expect(loadConfig({ env: { ROOST_TRANSLATION_URL: 'http://127.0.0.1:5000', ROOST_TRANSLATION_API_KEY: 'k' }, cwd }).translation).toEqual({
      url: 'http://127.0.0.1:5000',
      apiKey: 'k',
    });
    expect(() => loadConfig({ env: { ROOST_TRANSLATION_URL: 'ftp://x' }, cwd })).toThrow('ROOST_TRANSLATION_URL');
    expect(c.trustedProxies).toEqual(['127.0.0.1', '::1']);
    expect(c.logLevel).toBe('info');
  });

  it('turns authorized fetch on from ROOST_AUTHORIZED_FETCH or the file', () => {
    expect(loadConfig({ env: { ROOST_AUTHORIZED_FETCH: '1' }, cwd }).federation.authorizedFetch).toBe(true);
    expect(loadConfig({ env: {}, overrides: { federation: { authorizedFetch: true } }, cwd }).federation.authorizedFetch).toBe(true);
    expect(() => loadConfig({ env: { ROOST_AUTHORIZED_FETCH: 'perhaps' }, cwd })).toThrow('Invalid configuration ROOST_AUTHORIZED_FETCH: must be a boolean');
  });

  it('uses https for a public domain and http for private ones', () => {
    expect(loadConfig({ env: { ROOST_DOMAIN: 'social.example' }, cwd }).publicUrl).toBe('https://social.example');
    expect(loadConfig({ env: { ROOST_DOMAIN: '10.0.0.5:8080' }, cwd }).publicUrl).toBe('http://10.0.0.5:8080');
  });

  it('layers defaults < file < environment', () => {
    const file = path.join(cwd, 'layered.json');
    writeFileSync(file, JSON.stringify({ port: 4000, instance: { title: 'From file' }, registrations: { mode: 'approval' } }));
    const c = loadConfig({ env: { ROOST_CONFIG: file, ROOST_PORT: '5000' }, cwd });
    expect(c.port).toBe(5000);
    expect(c.instance.title).toBe('From file');
    expect(c.registrations.mode).toBe('approval');
  });

  it('reads ./roost.config.json when present', () => {
    const dir = tempDir('roost-config-');
    writeFileSync(path.join(dir, 'roost.config.json'), JSON.stringify({ domain: 'file.example' }));
    expect(loadConfig({ env: {}, cwd: dir }).domain).toBe('file.example');
  });

  it.each([
    [{ ROOST_PORT: 'abc' }, 'Invalid configuration ROOST_PORT: must be an integer from 0 to 65535, got "abc"'],
    [{ ROOST_PORT: '70000' }, 'Invalid configuration ROOST_PORT: must be an integer from 0 to 65535, got "70000"'],
    [{ ROOST_REGISTRATIONS: 'maybe' }, 'Invalid configuration ROOST_REGISTRATIONS: must be one of open, approval, closed, got "maybe"'],
    [{ ROOST_DOMAIN: 'https://x.example/' }, 'Invalid configuration ROOST_DOMAIN: must be a host name'],
    [{ ROOST_DATABASE_URL: 'mysql://x' }, 'Invalid configuration ROOST_DATABASE_URL: must be a postgres:// or postgresql:// URL'],
    [{ ROOST_ALLOW_PRIVATE_ADDRESSES: 'perhaps' }, 'Invalid configuration ROOST_ALLOW_PRIVATE_ADDRESSES: must be a boolean'],
    [{ ROOST_LOG_LEVEL: 'loud' }, 'Invalid configuration ROOST_LOG_LEVEL: must be one of'],
    [{ ROOST_RULES: '[1]' }, 'Invalid configuration ROOST_RULES[0]: must be a non-empty string'],
  ])('rejects %j naming the key', (env, message) => {
    expect(() => loadConfig({ env, cwd })).toThrowError(ConfigError);
    expect(() => loadConfig({ env, cwd })).toThrowError(message);
  });

  it('has Mastodon\'s rate limits and the body limits by default, each settable', () => {
    const c = loadConfig({ env: {}, cwd });
    expect(c.rateLimits).toEqual({
      enabled: true,
      exemptLoopback: true,
      perToken: { limit: 300, periodSeconds: 300 },
      perIp: { limit: 300, periodSeconds: 300 },
      signIn: { limit: 25, periodSeconds: 300 },
      signInPerLogin: { limit: 25, periodSeconds: 3600 },
      signUp: { limit: 5, periodSeconds: 1800 },
      uploads: { limit: 30, periodSeconds: 1800 },
    });
    expect(c.bodyLimits).toEqual({ maxBodyBytes: 1024 * 1024, maxUploadBytes: 33 * 1024 * 1024, timeoutSeconds: 60, maxImagePixels: 33_177_600, unauthenticatedBudgetBytes: 16 * 1024 * 1024, concurrentBodiesPerAddress: 16 });
    const file = path.join(cwd, 'limits.json');
    writeFileSync(file, JSON.stringify({ rateLimits: { signUp: { limit: 2, periodSeconds: 60 } }, bodyLimits: { maxBodyBytes: 2048 } }));
    const set = loadConfig({ env: { ROOST_CONFIG: file, ROOST_RATE_LIMIT_PER_IP: '10/60', ROOST_RATE_LIMITS: '0' }, cwd });
    expect(set.rateLimits).toMatchObject({ enabled: false, perIp: { limit: 10, periodSeconds: 60 }, signUp: { limit: 2, periodSeconds: 60 } });
    expect(set.bodyLimits.maxBodyBytes).toBe(2048);
    expect(() => loadConfig({ env: { ROOST_RATE_LIMIT_SIGN_IN: 'lots' }, cwd })).toThrowError(
      'Invalid configuration ROOST_RATE_LIMIT_SIGN_IN: must be LIMIT/SECONDS like 300/300, got "lots"',
    );
    expect(() => loadConfig({ env: { ROOST_RATE_LIMIT_SIGN_IN: '0/60' }, cwd })).toThrowError('ROOST_RATE_LIMIT_SIGN_IN limit: must be an integer from 1');
  });

  it('rejects unknown keys and broken JSON in the file', () => {
    const bad = path.join(cwd, 'unknown.json');
    writeFileSync(bad, JSON.stringify({ instance: { titel: 'typo' } }));
    expect(() => loadConfig({ env: { ROOST_CONFIG: bad }, cwd })).toThrowError('unknown key "instance.titel"');
    const broken = path.join(cwd, 'broken.json');
    writeFileSync(broken, '{"port": ');
    expect(() => loadConfig({ env: { ROOST_CONFIG: broken }, cwd })).toThrowError(/not JSON/);
  });

  it('refuses a section given as a value, naming the key and the keys it takes', () => {
    const cases: [unknown, RegExp][] = [
      [{ registrations: 'closed' }, /"registrations" must be an object with the keys mode, message \(got "closed"\)/],
      [{ instance: 'x' }, /"instance" must be an object with the keys title, .*contactEmail/],
      [{ federation: true }, /"federation" must be an object with the keys mode, .*authorizedFetch/],
      [{ rateLimits: [] }, /"rateLimits" must be an object/],
    ];
    for (const [data, message] of cases) {
      const file = path.join(cwd, 'shape.json');
      writeFileSync(file, JSON.stringify(data));
      expect(() => loadConfig({ env: { ROOST_CONFIG: file }, cwd })).toThrowError(message);
    }
  });

  it('warns of a ROOST_* variable it does not know, naming the nearest known one', () => {
    const c = loadConfig({ env: { ROOST_PORTT: '3000', ROOST_ZZZZZZZZZZZZ: '1', ROOST_PORT: '3001', ROOST_TEST_DATABASE_URL: 'x', HOME: '/root' }, cwd });
    expect(c.port).toBe(3001);
    expect(c.warnings).toEqual(['unknown variable ROOST_PORTT (did you mean ROOST_PORT?)', 'unknown variable ROOST_ZZZZZZZZZZZZ']);
    expect(loadConfig({ env: {}, cwd }).warnings).toEqual([]);
  });

  it('parses rules and languages', () => {
    const c = loadConfig({ env: { ROOST_RULES: '["Be kind", {"text":"No spam","hint":"ads count"}]', ROOST_LANGUAGES: 'en, de' }, cwd });
    expect(c.instance.rules).toEqual([
      { text: 'Be kind', hint: '' },
      { text: 'No spam', hint: 'ads count' },
    ]);
    expect(c.instance.languages).toEqual(['en', 'de']);
  });
});

describe('secrets', () => {
  it('are generated once, persisted with mode 0600, and read back unchanged', () => {
    const dir = tempDir('roost-secrets-');
    const first = loadOrCreateSecrets(dir);
    expect(first.secretKeyBase).toMatch(/^[0-9a-f]{128}$/);
    expect(Buffer.from(first.vapidPublicKey, 'base64url')).toHaveLength(65);
    expect(statSync(path.join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(loadOrCreateSecrets(dir)).toEqual(first);
    expect(JSON.parse(readFileSync(path.join(dir, 'secrets.json'), 'utf8'))).toEqual(first);
  });

  it('refuse a damaged file instead of silently regenerating', () => {
    const dir = tempDir('roost-secrets-');
    writeFileSync(path.join(dir, 'secrets.json'), '{"secretKeyBase":"x"}');
    expect(() => loadOrCreateSecrets(dir)).toThrowError('"vapidPublicKey" is missing');
  });
});

describe('config/README.md', () => {
  it('lists every key with its environment variable, and no key that does not exist', async () => {
    const { CONFIG_KEYS } = await import('../config/index.ts');
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../config/README.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `(ROOST_[A-Z0-9_]+)` \| `([\w.]+)` \|/gm)].map((m) => `${m[1]} ${m[2]}`);
    const keys = CONFIG_KEYS.filter((k) => k.env !== 'ROOST_CONFIG').map((k) => `${k.env} ${k.key}`);
    expect(rows.sort()).toEqual(keys.sort());
  });
});
