/**
 * Sending an activity to inboxes the way the peer's software does: the body serialised and
 * digested once, signed per inbox and per try (each try has its own Date), sent through the lab
 * network, and a failed try retried on the software's schedule (./retry.ts) through the lab's
 * scheduler, never a timer of its own.
 */
import { sha256Digest, signHeaders } from './signing.ts';
import type { DeliveryFailure } from './retry.ts';
import type { PeerAccount, PeerState } from './state.ts';
import type { Json } from './types.ts';

/** Delivers `activity` as `account` to each inbox once (shared inboxes deduplicated); resolves after the first tries. */
export async function deliver(state: PeerState, account: PeerAccount, activity: Json, inboxes: Iterable<string>): Promise<void> {
  const body = Buffer.from(JSON.stringify(activity));
  const digest = sha256Digest(body);
  const targets = new Set<string>();
  for (const inbox of inboxes) {
    try {
      // Never to itself: its own accounts already know.
      if (new URL(inbox).host !== new URL(state.base).host) targets.add(inbox);
    } catch {
      /* not a URL: nowhere to send */
    }
  }
  await Promise.all([...targets].map((inbox) => attempt(state, account, inbox, body, digest, 1)));
}

async function attempt(state: PeerState, account: PeerAccount, inbox: string, body: Buffer, digest: string, n: number): Promise<void> {
  const url = new URL(inbox);
  const now = state.ctx.clock.now();
  const headers = await signHeaders(state.style, { keyId: account.keyId, privateKey: state.privateKey }, 'POST', url, now, body, digest);
  let failure: DeliveryFailure;
  try {
    const res = await state.ctx.send({ method: 'POST', url, headers, body });
    if (res.status >= 200 && res.status < 300) {
      state.stats.delivered++;
      return;
    }
    failure = { status: res.status, retryAfter: res.headers['retry-after'] ?? null };
  } catch {
    failure = { status: null, retryAfter: null };
  }
  const { policy } = state;
  const badUntil = policy.badHostMs ? (state.badHosts.get(url.host) ?? 0) : 0;
  if (!policy.retryable(failure.status) || n >= policy.attempts || badUntil > now.getTime()) {
    state.stats.failed++;
    if (policy.badHostMs && n >= policy.attempts) state.badHosts.set(url.host, now.getTime() + policy.badHostMs);
    return;
  }
  state.stats.retries++;
  const at = new Date(now.getTime() + policy.delayMs(n, state.ctx.random, failure, now));
  state.ctx.schedule(at, () => attempt(state, account, inbox, body, digest, n + 1));
}
