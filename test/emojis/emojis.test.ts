/**
 * Custom emojis through the real server and the real `roost emojis` command (a process talking to
 * the running instance over its control socket): an operator adds, categorises, hides and
 * disables emojis; GET /api/v1/custom_emojis lists the picker's; `:shortcode:` in a status, its
 * content warning, its poll options, a display name and a profile field comes back in `emojis`;
 * a page of statuses naming emojis costs the same statements for 5 and 20.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser, type TestUser } from '../helpers/auth.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'src/cli.ts');
let roost: TestRoost;
let alice: TestUser;
let files: string;

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ROOST_DATA_DIR: roost.dataDir, ROOST_LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function png(file: string, color: string, size = 32): Promise<string> {
  const p = path.join(files, file);
  writeFileSync(p, await sharp({ create: { width: size, height: size, channels: 4, background: color } }).png().toBuffer());
  return p;
}

const emojiUrl = (kind: 'original' | 'static', ext: string) => new RegExp(`^${roost.at('/system/custom_emojis/')}\\d+/${kind}/[0-9a-f]{16}\\.${ext}$`);

beforeAll(async () => {
  roost = await startTestRoost({}, { controlSocket: true });
  alice = await createTestUser(roost, 'alice');
  files = mkdtempSync(path.join(tmpdir(), 'roost-emoji-'));
  const gif = path.join(files, 'party.gif');
  writeFileSync(gif, await sharp({ create: { width: 16, height: 16, channels: 3, background: '#ff0000' } }).gif().toBuffer());
  for (const args of [
    ['emojis', 'add', 'blobcat', await png('blobcat.png', '#3366ff'), '--category', 'Blobs'],
    ['emojis', 'add', 'party_parrot', gif],
    ['emojis', 'add', 'secret', await png('secret.png', '#000000'), '--unlisted'],
    ['emojis', 'add', 'gone', await png('gone.png', '#ffffff')],
  ]) {
    const r = await run(args);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toBe(`OK: :${args[2]}: added\n`);
  }
}, 120_000);
afterAll(async () => roost?.close());

describe('operating custom emojis', () => {
  it('lists the picker: enabled, visible ones, with their category; the images are served', async () => {
    const r = await apiRequest(roost, '/api/v1/custom_emojis');
    expect(r.status).toBe(200);
    expect(r.body.map((e: { shortcode: string }) => e.shortcode)).toEqual(['blobcat', 'gone', 'party_parrot']);
    const [blobcat, , parrot] = r.body;
    expect(blobcat).toEqual({ shortcode: 'blobcat', url: expect.stringMatching(emojiUrl('original', 'png')), static_url: expect.stringMatching(emojiUrl('static', 'png')), visible_in_picker: true, category: 'Blobs' });
    expect(Object.keys(parrot)).toEqual(['shortcode', 'url', 'static_url', 'visible_in_picker']);
    expect(parrot.url).toMatch(emojiUrl('original', 'gif'));
    expect(parrot.static_url).toMatch(emojiUrl('static', 'png'));
    for (const url of [blobcat.url, blobcat.static_url, parrot.url]) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
      expect(meta.width).toBe(url === parrot.url ? 16 : 32);
    }
  });

  it('refuses a shortcode in use, a bad shortcode and a file that is no image; lists by category; an unknown category is an error', async () => {
    const dup = await run(['emojis', 'add', 'blobcat', await png('other.png', '#00ff00')]);
    expect([dup.code, dup.stderr.trim()]).toEqual([1, 'roost: Validation failed: Shortcode has already been taken\n  shortcode: has already been taken (ERR_TAKEN)']);
    const bad = await run(['emojis', 'add', 'a', await png('a.png', '#00ff00')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('Shortcode must be at least 2 characters');
    const text = path.join(files, 'x.png');
    writeFileSync(text, '<svg onload=alert(1)>');
    const notImage = await run(['emojis', 'add', 'xx', text]);
    expect([notImage.code, notImage.stderr.split('\n')[0]]).toEqual([1, 'roost: Validation failed: Image must be a PNG, GIF or WebP image']);
    expect((await roost.services.db.sql.query(`select shortcode from custom_emojis order by shortcode`)).map((r) => r.shortcode)).toEqual([
      'blobcat', 'gone', 'party_parrot', 'secret',
    ]);

    const blobs = await run(['emojis', 'list', '--category', 'blobs']);
    expect(blobs.code).toBe(0);
    expect(blobs.stdout.split('\n')[0]).toMatch(/^SHORTCODE\s+CATEGORY\s+PICKER\s+DISABLED\s+URL$/);
    expect(blobs.stdout.split('\n')[1]).toMatch(/^blobcat\s+Blobs\s+yes\s+no\s+http/);
    expect(blobs.stdout.trim().split('\n')).toHaveLength(2);
    const unknown = await run(['emojis', 'list', '--category', 'Nope']);
    expect([unknown.code, unknown.stdout, unknown.stderr.trim()]).toEqual([1, '', 'roost: No emoji category Nope']);
  });

  it('renders :shortcode: in statuses, content warnings, poll options, display names and fields; disabled ones not', async () => {
    expect((await run(['emojis', 'disable', 'gone'])).stdout).toBe('OK: :gone: disabled\n');
    const cat = await run(['emojis', 'category', 'party_parrot', 'Party']);
    expect(cat.stdout).toBe('OK: :party_parrot: is in Party\n');
    const profile = await alice.api('/api/v1/accounts/update_credentials', {
      method: 'PATCH',
      body: { display_name: 'Alice :blobcat:', fields_attributes: { '0': { name: 'mood', value: ':party_parrot: :nope:' } } },
    });
    expect(profile.status).toBe(200);
    expect(profile.body.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['blobcat', 'party_parrot']);
    const posted = await alice.api('/api/v1/statuses', {
      method: 'POST',
      body: { status: 'hello :blobcat::gone: :secret: x:party_parrot:x :nope:', spoiler_text: 'cw :party_parrot:', poll: { options: [':blobcat: yes', 'no :gone:'], expires_in: 3600 } },
    });
    expect(posted.status).toBe(200);
    const s = (await apiRequest(roost, `/api/v1/statuses/${posted.body.id}`)).body;
    // Glued to another shortcode's colon or a letter, and disabled or unknown ones: not emojis.
    expect(s.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['party_parrot', 'secret']);
    expect(s.emojis[0]).toEqual({
      shortcode: 'party_parrot',
      url: expect.stringMatching(emojiUrl('original', 'gif')),
      static_url: expect.stringMatching(emojiUrl('static', 'png')),
      visible_in_picker: true,
      category: 'Party',
    });
    expect(s.emojis[1].visible_in_picker).toBe(false);
    expect(s.poll.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['blobcat']);
    expect((await apiRequest(roost, `/api/v1/polls/${s.poll.id}`)).body.emojis).toEqual(s.poll.emojis);
    expect(s.account.display_name).toBe('Alice :blobcat:');
    expect(s.account.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['blobcat', 'party_parrot']);

    expect((await run(['emojis', 'enable', 'gone'])).stdout).toBe('OK: :gone: enabled\n');
    expect((await apiRequest(roost, `/api/v1/statuses/${posted.body.id}`)).body.poll.emojis.map((e: { shortcode: string }) => e.shortcode)).toEqual(['blobcat', 'gone']);
    expect((await run(['emojis', 'remove', 'gone'])).stdout).toBe('OK: :gone: removed\n');
    expect((await apiRequest(roost, '/api/v1/custom_emojis')).body.map((e: { shortcode: string }) => e.shortcode)).toEqual(['blobcat', 'party_parrot']);
  });

  it('a page of statuses naming emojis costs the same statements for 5 and 20', async () => {
    const poster = await createTestUser(roost, 'poster');
    for (let i = 0; i < 22; i++) {
      const r = await poster.api('/api/v1/statuses', { method: 'POST', body: { status: `post ${i} :blobcat: :party_parrot:` } });
      expect(r.status).toBe(200);
    }
    const path = `/api/v1/accounts/${poster.account.id}/statuses`;
    await alice.api(`${path}?limit=1`);
    let five: any;
    let twenty: any;
    const q5 = await capturedStatements(roost, async () => (five = await alice.api(`${path}?limit=5`)));
    const q20 = await capturedStatements(roost, async () => (twenty = await alice.api(`${path}?limit=20`)));
    expect([five.body.length, twenty.body.length]).toEqual([5, 20]);
    expect(twenty.body.every((s: any) => s.emojis.length === 2)).toBe(true);
    expect(q20).toEqual(q5);
  });
});
