import type { LookupFunction } from 'node:net';
import type { Logger } from 'pino';
import type { RoostConfig } from '../config/index.ts';
import type { RoostSecrets } from '../config/secrets.ts';
import type { Database } from './db/orm.ts';
import type { IdGenerator } from './lib/snowflake.ts';
import type { Clock } from './lib/clock.ts';
import type { Network } from './lib/network.ts';
import type { Observer } from './lib/observe.ts';
import type { DomainPolicy } from './services/domain-policy.ts';

/**
 * What every service gets: one instance's configuration, database, clock, id generator and logger.
 * Nothing in Roost is global, so several instances live side by side in one process (tests, the
 * federation lab), each with its own Services.
 */
export interface Services {
  config: RoostConfig;
  secrets: RoostSecrets;
  db: Database;
  clock: Clock;
  ids: IdGenerator;
  log: Logger;
  /**
   * The instance's domain policy (blocks, allows, the federation mode), cached; every layer asks
   * it whether a server may be talked to (src/services/domain-policy.ts).
   */
  domainPolicy: DomainPolicy;
  /** The package version, reported by NodeInfo and the instance API. */
  version: string;
  /**
   * Name resolution for outbound fetches (src/lib/safe-fetch.ts checks its answers at connect
   * time). Unset: the system resolver. Tests set it to simulate DNS (a rebinding name).
   */
  dnsLookup?: LookupFunction;
  /**
   * Where outbound requests go instead of the Internet: the federation lab's virtual network
   * (src/lib/network.ts). Unset: guarded sockets, as always.
   */
  network?: Network;
  /**
   * The clock HTTP signatures are dated and checked by. Unset: the wall clock (what every peer
   * uses). The lab sets its own clock here, on every instance, so signatures stay fresh when it
   * jumps days ahead.
   */
  signatureClock?: Clock;
  /**
   * The random spread of retry delays (the delivery lanes, the job pools, Fedify's inbox queue),
   * ±share (default 0.25). The lab sets 0, so one seed gives one trace.
   */
  retryJitter?: number;
  /** The lab's observer of deliveries queued and activities applied (src/lib/observe.ts). */
  observe?: Observer;
}
