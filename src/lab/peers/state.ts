/**
 * What one light peer holds. Kept small on purpose (a lab runs 250 of these in one process): no
 * log of what arrived, only sets and counters; documents are rendered when asked, never stored;
 * the caches of other servers' keys and actors are bounded.
 */
import type { KeyObject } from 'node:crypto';
import type { PeerContext } from '../network-types.ts';
import type { Account, NoteRecord, Profile } from './profiles.ts';
import type { RetryPolicy } from './retry.ts';
import type { SignatureStyle } from './signing.ts';
import type { Json, PeerSoftware, RemoteActor } from './types.ts';

export interface PeerAccount extends Account {
  serial: number;
  /** Accepted remote followers: actor URI → where to deliver (shared inbox first) and the Follow's id. */
  followers: Map<string, { inbox: string; followId: string }>;
  /** Follow requests waiting on a locked account: actor URI → the Follow's id. */
  requests: Map<string, string>;
  notes: number;
}

export interface PeerState {
  name: string;
  base: string;
  software: PeerSoftware;
  profile: Profile;
  style: SignatureStyle;
  policy: RetryPolicy;
  ctx: PeerContext;
  privateKey: KeyObject;
  publicKeyPem: string;
  /** The instance actor's document and keyId (it signs this peer's fetches). */
  instance: { doc: Json; keyId: string };
  /** Dates further than this from the lab clock fail verification; null: not checked. */
  signatureWindow: { pastMs: number; futureMs: number } | null;
  accounts: Map<string, PeerAccount>;
  accountsById: Map<string, PeerAccount>;
  serial: number;
  /** Own notes by path. */
  notes: Map<string, NoteRecord>;
  /** Object URIs seen: a Create/Update/Announce of them arrived, or they were fetched. */
  known: Set<string>;
  tallies: Map<string, number[]>;
  replyCounts: Map<string, number>;
  keys: Map<string, { key: KeyObject; owner: string }>;
  actors: Map<string, RemoteActor>;
  /** Follows this peer's accounts sent: the Follow's id → who and whom, and whether it was accepted. */
  follows: Map<string, { username: string; target: string; accepted: boolean; activity: Json }>;
  /** GoToSocial: hosts that used up their tries → until when (lab clock, ms). */
  badHosts: Map<string, number>;
  inflight: Set<Promise<unknown>>;
  stats: { received: number; delivered: number; failed: number; retries: number };
}

/** At most this many entries in a peer's key and actor caches (oldest dropped first). */
export const CACHE_MAX = 512;

export function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  if (map.size >= CACHE_MAX) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** Runs `work` without waiting for it, so `idle()` can wait for it later; its failure is dropped. */
export function background(state: PeerState, work: Promise<unknown>): void {
  const p = work.catch(() => undefined).finally(() => state.inflight.delete(p));
  state.inflight.add(p);
}

export function idOf(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Json).id === 'string') return (v as Json).id as string;
  return null;
}
