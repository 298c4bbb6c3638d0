/**
 * Harmless federation traffic is logged quietly: a fetch of the instance actor, and an EmojiReact
 * (Pleroma, Akkoma, Hollo) which is accepted (202) and ignored as Mastodon ignores it, leave no
 * line at warning level or above in the instance's log.
 */
import { Writable } from 'node:stream';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, settled, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { startFakeSoftware, type FakeSoftware } from '../helpers/fake-software.ts';

const lines: Record<string, unknown>[] = [];
const stream = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
    done();
  },
});
const WARN = 40;
const loud = () => lines.filter((l) => (l.level as number) >= WARN).map((l) => `${l.level} ${l.module ?? ''} ${l.category ?? ''} ${l.msg}`);

let roost: TestRoost;
let alice: TestUser;
let note: { id: string; uri: string };
const fakes: FakeSoftware[] = [];
beforeAll(async () => {
  roost = await startTestRoost({ logLevel: 'debug' }, { logDestination: stream });
  alice = await createTestUser(roost, 'alice');
  note = (await alice.api('/api/v1/statuses', { method: 'POST', body: { status: 'react to me' } })).body;
  await settled(roost);
}, 120_000);
afterAll(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  await roost?.close();
});

describe('quiet logs for harmless federation traffic', () => {
  it('fetching the instance actor logs nothing at warning level', async () => {
    lines.length = 0;
    for (const path of ['/users/instance.actor', '/users/instance.actor', '/.well-known/webfinger?resource=acct:127.0.0.1@127.0.0.1']) {
      const res = await fetch(roost.at(path), { headers: { accept: 'application/activity+json' } });
      expect([path, res.status]).toEqual([path, path.startsWith('/.well') ? res.status : 200]);
      await res.arrayBuffer();
    }
    await settled(roost);
    expect(loud()).toEqual([]);
    // Kept, at debug.
    expect(lines.some((l) => l.level === 20 && String(l.msg).startsWith('You configured '))).toBe(true);
  });

  for (const software of ['pleroma', 'hollo'] as const) {
    it(`an EmojiReact from ${software}: 202, ignored (no favourite), nothing at warning level`, async () => {
      const fake = await startFakeSoftware(software);
      fakes.push(fake);
      const values = { local: roost.url, local_host: new URL(roost.url).host, local_actor: roost.at('/users/alice'), local_actor_id: alice.account.id, local_note: note.uri };
      lines.length = 0;
      const res = await fake.deliver(`${roost.url}/users/alice/inbox`, 'emoji-react', values);
      expect(res.status).toBe(202);
      await settled(roost);
      expect(loud()).toEqual([]);
      expect(lines.some((l) => l.level === 20 && l.msg === 'EmojiReact ignored')).toBe(true);
      expect((await alice.api(`/api/v1/statuses/${note.id}`)).body.favourites_count).toBe(0);
    });
  }
});
