/**
 * What crosses the lab's virtual network: plain requests and answers, no sockets. A host on the
 * network is either a full Roost (the network forwards to its loopback listener) or a light peer
 * (src/lab/peers/), which answers in-process.
 */
import type { Clock } from '../lib/clock.ts';

export type { WireRequest, WireResponse } from '../lib/network.ts';
import type { WireRequest, WireResponse } from '../lib/network.ts';

/** A host the network can deliver to. */
export interface NetworkHost {
  /** Its host name, e.g. `alpha.test`. */
  readonly name: string;
  handle(req: WireRequest): Promise<WireResponse>;
}

/** What a light peer gets from the lab. */
export interface PeerContext {
  /** The lab clock (signature dates follow it). */
  clock: Clock;
  /** Sends through the virtual network as this host (faults apply). Rejects like a failed connection. */
  send(req: WireRequest): Promise<WireResponse>;
  /** Runs fn when the lab clock reaches `at` (retries, timers): the lab's scheduler owns time. */
  schedule(at: Date, fn: () => void | Promise<void>): void;
  /** A seeded random number in [0, 1) of this peer's own stream. */
  random(): number;
}
