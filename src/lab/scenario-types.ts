/**
 * The federation lab's scenario, as parsed from its YAML file (src/lab/scenario.ts) and validated
 * against config/lab/scenario.schema.json before anything runs. Durations are milliseconds here;
 * in the file they are strings such as `250ms`, `30s`, `10m`, `2h`, `7d` (or a number of ms).
 * Every step keeps the 1-based line of the file it came from, so a failure names it.
 */

export type Software = 'roost' | 'mastodon' | 'gotosocial' | 'misskey' | 'pleroma';

export interface InstanceSpec {
  /** The host name, e.g. `alpha.test` (the key in the file). */
  name: string;
  /** `roost` runs a full Roost instance; the others are light peer profiles (src/lab/peers.ts). */
  software: Software;
  registrations: 'open' | 'approval' | 'closed';
  federationMode: 'open' | 'allowlist';
  authorizedFetch: boolean;
  domainBlocks: { domain: string; severity: 'silence' | 'suspend' | 'noop' }[];
  line: number;
}

/**
 * A link's latency drawn per delivery from a log-normal law of this mean, kept within [min, max]
 * (the field measures propagation that way: a long tail of slow servers). The runner picks the
 * shape; the file gives only these three figures.
 */
export interface LatencyDistribution {
  kind: 'lognormal';
  meanMs: number;
  minMs: number;
  maxMs: number;
}

/** One link's behaviour; every field optional in the file, the network's defaults fill the rest. */
export interface LinkSpec {
  /** Used when `latencyDist` is absent (jitter adds to either). */
  latencyMs: number;
  /** When present, each delivery's latency is drawn from it instead of `latencyMs`. */
  latencyDist?: LatencyDistribution;
  jitterMs: number;
  /** 0..1 */
  loss: number;
  duplicate: number;
  reorder: number;
  /** HTTP status → probability (404, 410, 429, 500, 502, 503). */
  errors: Record<string, number>;
  /** Extra delay the receiving inbox takes before it answers (a slow inbox). */
  slowMs: number;
  /** The host does not answer at all (a server that is down): every request fails to connect. */
  down: boolean;
}

export interface LinkRule extends Partial<LinkSpec> {
  /**
   * A host name or `*`. A file's patterns (`peer*.test`) and `down_fraction` are resolved by the
   * parser into one rule per matched host, so the runner only meets these two forms.
   */
  from: string;
  to: string;
  line: number;
}

export interface NetworkSpec {
  defaults: LinkSpec;
  /** Later rules override earlier ones; `*` matches any host. */
  links: LinkRule[];
}

export interface AccountSpec {
  /** `alice@alpha.test` */
  handle: string;
  username: string;
  instance: string;
  displayName?: string;
  locked: boolean;
  bot: boolean;
  line: number;
}

/** A status named by an earlier step (`name:`), or an account handle where an account is meant. */
export type StatusRef = string;
export type AccountRef = string;
export type Visibility = 'public' | 'unlisted' | 'private' | 'direct';

export type Step = { line: number } & (
  | { kind: 'follow'; as: AccountRef; target: AccountRef }
  | { kind: 'unfollow'; as: AccountRef; target: AccountRef }
  | {
      kind: 'post';
      as: AccountRef;
      text: string;
      name?: string;
      visibility: Visibility;
      poll?: { options: string[]; expiresInMs: number; multiple: boolean };
    }
  | { kind: 'reply'; as: AccountRef; to: StatusRef; text: string; name?: string; visibility: Visibility }
  | { kind: 'boost'; as: AccountRef; status: StatusRef }
  | { kind: 'like'; as: AccountRef; status: StatusRef }
  | { kind: 'vote'; as: AccountRef; poll: StatusRef; choices: number[] }
  | { kind: 'edit'; as: AccountRef; status: StatusRef; text: string }
  | { kind: 'delete'; as: AccountRef; status: StatusRef }
  /** A reader opens the thread below `status` (its context), which completes it where completion is on. */
  | { kind: 'open'; as: AccountRef; status: StatusRef }
  | { kind: 'block'; as: AccountRef; target: AccountRef }
  /** `from` moves to `to` (an account declared on another instance, aliased first by the runner). */
  | { kind: 'move'; from: AccountRef; to: AccountRef }
  | { kind: 'report'; as: AccountRef; target: AccountRef; statuses: StatusRef[]; comment: string; forward: boolean }
  | { kind: 'domain_block'; on: string; domain: string; severity: 'silence' | 'suspend' }
  | { kind: 'advance'; ms: number }
  /** Hosts in different groups cannot reach each other until healed. */
  | { kind: 'partition'; groups: string[][] }
  | { kind: 'heal' }
  /** Changes links from here on (same fields as the network's rules). */
  | { kind: 'link'; rules: LinkRule[] }
  | { kind: 'crash'; instance: string }
  | { kind: 'restart'; instance: string }
  | { kind: 'expect'; assertion: Assertion; withinMs: number }
);

export type Assertion =
  /** The status can be read on `on` (by `viewer` when given, else anonymously through the API's lookup). */
  | { kind: 'visible'; status: StatusRef; on: string; viewer?: AccountRef }
  | { kind: 'not_visible'; status: StatusRef; on: string; viewer?: AccountRef }
  /** Every listed instance reports `count` followers for the account (the home instance included when listed). */
  | { kind: 'followers'; account: AccountRef; on: string[]; count: number }
  /** The poll's tallies read the same on every listed instance (and equal `votes` when given). */
  | { kind: 'poll'; status: StatusRef; on: string[]; votes?: number[] }
  /** The thread below `status`, read on `on`, holds `replies` descendants (or at least `atLeast`). */
  | ({ kind: 'thread'; status: StatusRef; on: string } & ({ replies: number; atLeast?: undefined } | { atLeast: number; replies?: undefined }))
  /** The account follows the target, as seen on `on`. */
  | { kind: 'following'; account: AccountRef; target: AccountRef; on: string };

export interface Scenario {
  name: string;
  description?: string;
  file: string;
  seed: number;
  /** The lab clock's start (default 2026-01-01T00:00:00Z). */
  start: Date;
  instances: InstanceSpec[];
  network: NetworkSpec;
  accounts: AccountSpec[];
  steps: Step[];
}

/** A scenario that cannot run: every problem found, each with its line. */
export class ScenarioError extends Error {
  override name = 'ScenarioError';
  // Plain fields, not parameter properties: Node runs this file by stripping types
  // (erasableSyntaxOnly), and parameter properties are not erasable.
  readonly file: string;
  readonly problems: { line: number; message: string }[];
  constructor(file: string, problems: { line: number; message: string }[]) {
    super(problems.map((p) => `${file}:${p.line}: ${p.message}`).join('\n'));
    this.file = file;
    this.problems = problems;
  }
}
