/**
 * The per-subscriber filter hook (src/streaming/filters.ts filterForSubscriber), with a stand-in
 * for the filter engine: `hidden` drops the event for that subscriber only; `filtered` is set in
 * that subscriber's payload only; the hook is asked once per subscribed account and context.
 */
import { describe, it, expect, beforeAll, afterAll, vi } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { createTestUser, type TestUser } from '../helpers/auth.ts';
import { WsClient, sleep, type Frame } from './client.ts';

const calls: string[] = [];
let filteringAccount = '';
vi.mock('../../src/streaming/filters.ts', () => ({
  filterForSubscriber: async (_services: unknown, accountId: string, status: { content?: string }, context: string) => {
    calls.push(`${accountId} ${context}`);
    if (accountId !== filteringAccount) return { hidden: false };
    if (status.content?.includes('hideme')) return { hidden: true };
    if (status.content?.includes('warnme')) return { hidden: false, filtered: [{ filter: { id: '1', title: 'w' }, keyword_matches: ['warnme'], status_matches: [] }] };
    return { hidden: false };
  },
}));

let roost: TestRoost;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
beforeAll(async () => {
  roost = await startTestRoost();
  [alice, bob, carol] = [await createTestUser(roost, 'alice'), await createTestUser(roost, 'bob'), await createTestUser(roost, 'carol')];
  filteringAccount = bob.account.id;
}, 60_000);
afterAll(async () => roost?.close());

const post = async (status: string) => (await alice.api('/api/v1/statuses', { method: 'POST', body: { status } })).body.id as string;
const isUpdate = (id: string) => (f: Frame) => f.event === 'update' && JSON.parse(f.payload!).id === id;

describe('the streaming filter hook', () => {
  it('hides for one subscriber, warns in that subscriber payload only', async () => {
    const b = await WsClient.open(roost, `?access_token=${bob.token}&stream=public`);
    b.send({ type: 'subscribe', stream: 'public:local' });
    const c = await WsClient.open(roost, `?access_token=${carol.token}&stream=public`);
    await sleep(100);
    const hidden = await post('hideme please');
    const warned = await post('warnme please');
    await c.waitFor(isUpdate(warned));
    const [bw] = await b.waitFor(isUpdate(warned), 2);
    await settled(roost);
    await sleep(200);
    expect(b.frames.filter(isUpdate(hidden))).toEqual([]);
    expect(c.frames.filter(isUpdate(hidden)).length).toBe(1);
    expect(JSON.parse(bw.payload!).filtered).toEqual([{ filter: { id: '1', title: 'w' }, keyword_matches: ['warnme'], status_matches: [] }]);
    // The public rendering has no `filtered` (Mastodon: only with a current user), and carol gets none added.
    expect(JSON.parse(c.frames.find(isUpdate(warned))!.payload!).filtered).toBeUndefined();
    // One call per account and context per event, whatever the number of its subscriptions.
    expect(calls.filter((x) => x === `${bob.account.id} public`).length).toBe(2);
    b.close();
    c.close();
  });
});
