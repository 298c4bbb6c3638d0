/**
 * One outbound transport per instance (src/federation/transport.ts), through real deliveries
 * (sendActivity → a delivery job → a signed POST) on loopback sockets, three instances in one
 * process: `fast` (private addresses allowed, a 1 s delivery timeout), `slow` (allowed, 3 s) and
 * `guarded` (refused). Each keeps its own bounds: a tarpit inbox is abandoned at each one's own
 * timeout; an inbox whose name resolves to a private address is refused by `guarded` before any
 * TCP connection is opened (a server counting accepted connections stays at 0), while `fast`
 * delivers to it; the instance's own origin stays reachable; the process's global dispatcher is
 * never touched.
 */
import http from 'node:http';
import { lookup as systemLookup } from 'node:dns';
import type { AddressInfo, LookupFunction, Socket } from 'node:net';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { Create, Note, PUBLIC_COLLECTION, type Recipient } from '@fedify/vocab';
import { startTestRoost, eventually, type TestRoost } from '../helpers/roost.ts';
import { createTestUser } from '../helpers/auth.ts';
import { deliveryState, sendActivity, type DeliveryState } from '../../src/federation/delivery.ts';

/** Where Node's fetch keeps its dispatcher: no instance may replace it. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
const globalDispatcher = () => (globalThis as unknown as Record<symbol, unknown>)[GLOBAL_DISPATCHER];

/** A loopback address that is none of the instances' own (they listen on 127.0.0.1). */
const INBOX_ADDRESS = '127.0.0.2';
const TARPIT_ADDRESS = '127.0.0.3';

/** The simulated DNS: inbox.test is at INBOX_ADDRESS; the names asked are recorded. */
const asked: string[] = [];
const dnsLookup: LookupFunction = (hostname, options, callback) => {
  asked.push(hostname);
  if (hostname !== 'inbox.test') return systemLookup(hostname, options, callback);
  (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: INBOX_ADDRESS, family: 4 }]);
};

interface Listening {
  server: http.Server;
  port: number;
  sockets: Set<Socket>;
}
async function listen(address: string, handler: http.RequestListener): Promise<Listening> {
  const server = http.createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, address, r));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}
const stop = (l: Listening) =>
  new Promise<void>((r) => {
    for (const s of l.sockets) s.destroy();
    l.server.close(() => r());
  });

let fast: TestRoost;
let slow: TestRoost;
let guarded: TestRoost;
let dispatcherBefore: unknown;

// The inbox server: counts every TCP connection it accepts, answers 202 to a POST.
let connections = 0;
const received: { path: string; signature: string }[] = [];
let inbox: Listening;
// The tarpit: reads the request, never answers; when each request came and its socket closed, per path.
const tarpit = { opened: new Map<string, number[]>(), closed: new Map<string, number[]>() };
let tarpitServer: Listening;

beforeAll(async () => {
  // fetch's default dispatcher, as it is before any instance starts.
  await fetch('data:,');
  dispatcherBefore = globalDispatcher();
  inbox = await listen(INBOX_ADDRESS, (req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ path: req.url ?? '', signature: String(req.headers.signature) });
      res.writeHead(202).end();
    });
  });
  inbox.server.on('connection', () => connections++);
  tarpitServer = await listen(TARPIT_ADDRESS, (req) => {
    const path = req.url ?? '';
    req.resume();
    req.on('end', () => tarpit.opened.set(path, [...(tarpit.opened.get(path) ?? []), Date.now()]));
    req.socket.once('close', () => tarpit.closed.set(path, [...(tarpit.closed.get(path) ?? []), Date.now()]));
  });
  [fast, slow, guarded] = await Promise.all([
    startTestRoost({ federation: { allowPrivateAddresses: true, deliveryTimeoutSeconds: 1 } }, { dnsLookup }),
    startTestRoost({ federation: { allowPrivateAddresses: true, deliveryTimeoutSeconds: 3 } }),
    startTestRoost({ federation: { allowPrivateAddresses: false, deliveryTimeoutSeconds: 1 } }, { dnsLookup }),
  ]);
  await Promise.all([createTestUser(fast, 'sender'), createTestUser(slow, 'sender'), createTestUser(guarded, 'sender')]);
});
afterAll(async () => {
  await Promise.all([fast?.close(), slow?.close(), guarded?.close()]);
  if (inbox) await stop(inbox);
  if (tarpitServer) await stop(tarpitServer);
});

let n = 0;
/** A public Note from `roost`'s sender, through Roost's delivery to the one inbox `inboxUrl`. */
async function deliver(roost: TestRoost, inboxUrl: string): Promise<string> {
  const ctx = roost.federation.createContext(new URL(roost.url), undefined);
  const actor = ctx.getActorUri('sender');
  const id = new URL(roost.at(`/users/sender/statuses/transport-${++n}`));
  const activity = new Create({
    id: new URL(`${id.href}/activity`),
    actor,
    to: PUBLIC_COLLECTION,
    object: new Note({ id, attribution: actor, to: PUBLIC_COLLECTION, content: `<p>note ${n}</p>` }),
  });
  const to: Recipient = { id: new URL('/users/someone', inboxUrl), inboxId: new URL(inboxUrl), endpoints: null };
  const activityId = await sendActivity(roost.services, ctx, 'sender', to, activity);
  expect(activityId).toBe(activity.id!.href);
  return activityId!;
}

/** The deliveries row once the activity's first round is over. */
function firstRound(roost: TestRoost, activityId: string): Promise<DeliveryState> {
  return eventually(async () => {
    const state = await deliveryState(roost.services.db.sql, activityId);
    return state && (state.pending === 0 || state.lastError) ? state : null;
  }, 20_000, `the first delivery round of ${activityId}`);
}

describe('one outbound transport per instance', () => {
  it('abandons a tarpit inbox at each instance’s own delivery timeout', async () => {
    const tarpitAt = (path: string) => `http://${TARPIT_ADDRESS}:${tarpitServer.port}${path}`;
    const [fastId, slowId] = await Promise.all([deliver(fast, tarpitAt('/fast/inbox')), deliver(slow, tarpitAt('/slow/inbox'))]);
    await eventually(async () => tarpit.closed.has('/fast/inbox') && tarpit.closed.has('/slow/inbox'), 20_000, 'both tarpit attempts given up');
    const held = (path: string) => tarpit.closed.get(path)![0]! - tarpit.opened.get(path)![0]!;
    // undici's timers tick in about half a second: each attempt is given up at its own
    // instance's timeout, not at the longest of the process's.
    expect(held('/fast/inbox')).toBeGreaterThanOrEqual(900);
    expect(held('/fast/inbox')).toBeLessThan(2_500);
    expect(held('/slow/inbox')).toBeGreaterThanOrEqual(2_900);
    expect(held('/slow/inbox')).toBeLessThan(5_000);
    // Each delivery is left for a retry (its job's backoff), the timeout on record.
    for (const [roost, id, path] of [[fast, fastId, '/fast/inbox'], [slow, slowId, '/slow/inbox']] as const) {
      const state = await firstRound(roost, id);
      expect(state).toMatchObject({ inboxes: 1, delivered: 0, failed: 0, pending: 1 });
      expect(state.lastError).toBe(`${tarpitAt(path)}: Headers Timeout Error`);
    }
  });

  it('refuses an inbox on a private address before connecting, where another instance delivers to it', async () => {
    const byName = `http://inbox.test:${inbox.port}/inbox`;
    const byLiteral = `http://${INBOX_ADDRESS}:${inbox.port}/inbox`;
    asked.length = 0;

    // guarded: the name is resolved (by the connecting socket's lookup) and refused, and an IP
    // literal is refused before any socket is made. No TCP connection is opened at all.
    const refused = await firstRound(guarded, await deliver(guarded, byName));
    expect(refused).toMatchObject({ inboxes: 1, delivered: 0, pending: 1 });
    expect(refused.lastError).toBe(`${byName}: inbox.test resolves to a non-public address`);
    expect(asked).toEqual(['inbox.test']);
    const literal = await firstRound(guarded, await deliver(guarded, byLiteral));
    expect(literal.lastError).toBe(`${byLiteral}: ${INBOX_ADDRESS} is not a public address: not delivered`);
    expect(connections).toBe(0);
    expect(received).toEqual([]);

    // fast, in the same process, allows private addresses: the same inbox gets its signed POST.
    const delivered = await firstRound(fast, await deliver(fast, byName));
    expect(delivered).toMatchObject({ inboxes: 1, delivered: 1, failed: 0, pending: 0, lastError: null });
    expect(connections).toBe(1);
    expect(received).toHaveLength(1);
    expect(received[0]!.path).toBe('/inbox');
    expect(received[0]!.signature).toContain(`keyId="${fast.at('/users/sender#main-key')}"`);
  });

  it('reaches the guarded instance’s own origin, and leaves the process’s dispatcher alone', async () => {
    const own = await firstRound(guarded, await deliver(guarded, guarded.at('/users/sender/inbox')));
    // Connected and answered (the instance's own inbox refuses its own unverifiable POST), not refused.
    expect(own.lastError).toBe(`${guarded.at('/users/sender/inbox')}: HTTP 401`);
    expect(globalDispatcher()).toBe(dispatcherBefore);
  });
});
