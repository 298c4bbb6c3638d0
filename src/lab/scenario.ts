/**
 * The federation lab's scenario file: YAML in, a checked `Scenario` (scenario-types.ts) out.
 *
 * Three passes, and every problem of all three is reported at once (a researcher fixes a file in
 * one go rather than one error per run):
 *   1. YAML, through the `yaml` package's Document API with a LineCounter, so each node knows its
 *      line. A malformed file stops here: its tree is not worth checking.
 *   2. The JSON Schema config/lab/scenario.schema.json (the format's reference), with Ajv. Ajv's
 *      errors name JSON pointers; they are mapped back to nodes, hence to lines, and reworded.
 *   3. References, in file order: instances, accounts and status names must be declared (status
 *      names by an earlier step), votes go to polls, crashes to running instances, and so on. This
 *      pass reads the raw tree tolerantly (a field of the wrong type was reported by pass 2 and is
 *      skipped here), so a schema error does not hide a reference error elsewhere.
 *
 * The file's compact forms are resolved here so the runner sees only the plain contract: `peers`
 * generators become instances, host patterns in link rules become one rule per host, and a rule's
 * `down_fraction` becomes `down: true` rules for a seeded choice of its hosts.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Ajv2020Module, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { MASTODON_LIMITS } from '../../config/index.ts';
import { nearestName } from '../../config/nearest.ts';
import {
  ScenarioError,
  type AccountSpec,
  type Assertion,
  type InstanceSpec,
  type LatencyDistribution,
  type LinkRule,
  type LinkSpec,
  type Scenario,
  type Software,
  type Step,
  type Visibility,
} from './scenario-types.ts';

const Ajv2020 = Ajv2020Module.default;

export const SCENARIO_SCHEMA_PATH = path.resolve(import.meta.dirname, '../../config/lab/scenario.schema.json');

export const STEP_KINDS = [
  'follow', 'unfollow', 'post', 'reply', 'boost', 'like', 'vote', 'edit', 'delete', 'open', 'block', 'move', 'report',
  'domain_block', 'advance', 'partition', 'heal', 'link', 'crash', 'restart', 'expect',
] as const;

export const ASSERTION_KINDS = ['visible', 'not_visible', 'followers', 'poll', 'thread', 'following'] as const;

/** What an account on a light peer can be driven to do: the peers implement these and no more. */
export const PEER_STEPS: readonly string[] = ['post', 'reply', 'follow', 'like', 'boost'];

export const DEFAULT_START = '2026-01-01T00:00:00Z';

/** No fault unless the file asks for one: a scenario's network is only as bad as it says. */
export const DEFAULT_LINK: LinkSpec = Object.freeze({
  latencyMs: 0,
  jitterMs: 0,
  loss: 0,
  duplicate: 0,
  reorder: 0,
  errors: {},
  slowMs: 0,
  down: false,
}) as LinkSpec;

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$/;

/** `250ms`, `30s`, `10m`, `2h`, `7d`, `8.6s`, or a number of ms → ms; null when it is none of those. */
export function parseDuration(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
  if (typeof value !== 'string') return null;
  const m = DURATION.exec(value);
  return m ? Math.round(Number(m[1]) * UNITS_MS[m[2]!]!) : null;
}

// ---------------------------------------------------------------------------------------------
// The schema, compiled once.

type Json = Record<string, unknown>;

let compiled: { schema: Json; validate: ValidateFunction; defOf: Map<object, string> } | undefined;

/** Ajv's options for the scenario schema (the test compiles the schema with the same ones). */
export const AJV_OPTIONS = {
  allErrors: true,
  // parentSchema on each error: the rewording below finds which $defs entry failed by identity.
  verbose: true,
  // `{}` and an empty value (`alpha.test:`) both mean "the defaults": ["object", "null"].
  allowUnionTypes: true,
  strictTypes: true,
  strictTuples: true,
} as const;

function schemaParts() {
  if (!compiled) {
    const schema = JSON.parse(readFileSync(SCENARIO_SCHEMA_PATH, 'utf8')) as Json;
    const validate = new Ajv2020(AJV_OPTIONS).compile(schema);
    // Every object inside a $defs entry → that entry's name, to tell (say) a bad duration from a
    // bad host name whatever path Ajv's inlining gives the error.
    const defOf = new Map<object, string>();
    const mark = (node: unknown, name: string): void => {
      if (node === null || typeof node !== 'object') return;
      defOf.set(node, name);
      for (const child of Object.values(node)) mark(child, name);
    };
    for (const [name, def] of Object.entries(schema.$defs as Json)) mark(def, name);
    compiled = { schema, validate, defOf };
  }
  return compiled;
}

// ---------------------------------------------------------------------------------------------
// Lines.

type Segment = string | number;

/** The YAML document with its line counter: JSON-pointer-like paths → 1-based lines. */
class Lines {
  private readonly doc: Document;
  private readonly counter: LineCounter;
  constructor(doc: Document, counter: LineCounter) {
    this.doc = doc;
    this.counter = counter;
  }

  at(offset: number | undefined): number {
    return offset === undefined ? 1 : this.counter.linePos(offset).line;
  }

  /**
   * The line of the deepest node `segments` reaches: a map entry's key line (the line a reader
   * looks for, and the only one an empty value has), a sequence item's first line.
   */
  of(segments: readonly Segment[]): number {
    let node: unknown = this.doc.contents;
    let line = this.at((node as { range?: [number] } | null)?.range?.[0]);
    for (const seg of segments) {
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (!pair) break;
        line = this.at((pair.key as { range?: [number] }).range?.[0]);
        node = pair.value;
      } else if (isSeq(node)) {
        const item = node.items[Number(seg)];
        if (item === undefined) break;
        const start = (item as { range?: [number] } | null)?.range?.[0];
        if (start !== undefined) line = this.at(start);
        node = item;
      } else break;
    }
    return line;
  }
}

function pointer(instancePath: string): string[] {
  if (!instancePath) return [];
  return instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * A path as the reader knows it: `post.poll.options` inside a step (the line says which step),
 * `instance beta.test: registrations`, `network.links[2].loss` elsewhere.
 */
function describe(segments: readonly Segment[]): string {
  const join = (rest: readonly Segment[]) =>
    rest.reduce<string>((acc, s) => (typeof s === 'number' || /^[0-9]+$/.test(String(s)) ? `${acc}[${s}]` : acc ? `${acc}.${s}` : String(s)), '');
  const [head, key, ...rest] = segments;
  if (head === 'steps' && key !== undefined) return rest.length ? join(rest) : 'step';
  if (head === 'instances' && key !== undefined) return `instance ${key}${rest.length ? ` ${join(rest)}` : ''}`;
  if (head === 'accounts' && key !== undefined) return `account ${key}${rest.length ? ` ${join(rest)}` : ''}`;
  return segments.length ? join(segments) : 'the file';
}

const didYouMean = (name: string, known: Iterable<string>): string => {
  const near = nearestName(name, known);
  return near ? ` (did you mean ${near}?)` : '';
};

const list = (xs: readonly unknown[]) => xs.map(String).join(', ');

// ---------------------------------------------------------------------------------------------
// Schema errors, reworded.

function typeWords(type: unknown): string {
  const words: Record<string, string> = {
    object: 'a map',
    array: 'a list',
    string: 'a string',
    number: 'a number',
    integer: 'a whole number',
    boolean: 'true or false',
    null: 'empty',
  };
  const types = (Array.isArray(type) ? type : [type]).filter((t) => t !== 'null');
  return types.map((t) => words[String(t)] ?? String(t)).join(' or ');
}

function valueAt(data: unknown, segments: readonly string[]): unknown {
  let v = data;
  for (const s of segments) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[s] : undefined;
  return v;
}

const show = (v: unknown) => (typeof v === 'string' ? `"${v}"` : JSON.stringify(v));

function schemaProblems(data: unknown, lines: Lines): { line: number; message: string }[] {
  const { validate, defOf } = schemaParts();
  if (validate(data)) return [];
  let errors = (validate.errors ?? []) as (ErrorObject & { propertyName?: string })[];

  // A failed anyOf/oneOf explains itself better than each of its branches does.
  const alternatives = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  errors = errors.filter(
    (e) => !alternatives.some((a) => a !== e && e.schemaPath.startsWith(`${a.schemaPath}/`) && e.instancePath.startsWith(a.instancePath)),
  );
  // The inner error of propertyNames carries the reason; the outer one only says "invalid".
  errors = errors.filter((e) => e.keyword !== 'propertyNames');
  // A step with two keys is most often a field indented one level short (`name:` under `- post:`):
  // saying so beats calling the stray field an unknown step.
  const crowded = new Set(errors.filter((e) => e.keyword === 'maxProperties').map((e) => e.instancePath));
  errors = errors.filter((e) => !(e.propertyName !== undefined && crowded.has(e.instancePath)));

  const out: { line: number; message: string }[] = [];
  for (const e of errors) {
    const segs = pointer(e.instancePath);
    const where = describe(segs);
    const def = defOf.get(e.parentSchema as object) ?? '';
    const value = valueAt(data, segs);
    let line = lines.of(segs);
    let message: string;

    if (e.propertyName !== undefined) {
      // A key of a map failed its propertyNames schema.
      const key = e.propertyName;
      line = lines.of([...segs, key]);
      if (def === 'step') message = `unknown step "${key}"${didYouMean(key, STEP_KINDS)}`;
      else if (def === 'hostName') message = `instance name "${key}" is not a host name such as alpha.test`;
      else if (def === 'handle') message = `account "${key}" is not a handle such as alice@alpha.test`;
      else if (def === 'errors') message = `${where}: ${key} is not one of ${list((e.params as { allowedValues: unknown[] }).allowedValues)}`;
      else message = `${where}: "${key}" ${e.message}`;
    } else if (e.keyword === 'additionalProperties') {
      const key = (e.params as { additionalProperty: string }).additionalProperty;
      line = lines.of([...segs, key]);
      const known = Object.keys(((e.parentSchema as Json).properties as Json | undefined) ?? {});
      message = `${where}: unknown field "${key}"${didYouMean(key, known)}`;
      if (known.length && !nearestName(key, known)) message += ` (known: ${list(known)})`;
    } else if (e.keyword === 'required') {
      message = `${where}: missing "${(e.params as { missingProperty: string }).missingProperty}"`;
    } else if (e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      if (def === 'duration') message = `${where}: bad duration ${show(value)} (use 250ms, 30s, 10m, 2h, 7d or a number of milliseconds)`;
      else if (def === 'hosts') message = `${where}: must be a host name or a list of host names`;
      else if (def === 'expect') {
        const given = value && typeof value === 'object' ? ASSERTION_KINDS.filter((k) => k in value) : [];
        message = given.length
          ? `expect: one assertion per step, found ${list(given)}`
          : `expect: needs one of ${list(ASSERTION_KINDS)}`;
      } else if (def === 'peers') message = `${where}: must be one of roost, mastodon, gotosocial, misskey, pleroma, or a list of them`;
      else message = `${where}: ${e.message}`;
    } else if (e.keyword === 'type') {
      if (def === 'step') message = `a step must be a map such as "follow: { as: …, target: … }"`;
      else message = `${where}: must be ${typeWords((e.params as { type: unknown }).type)}`;
    } else if (e.keyword === 'enum') {
      message = `${where}: ${show(value)} is not one of ${list((e.params as { allowedValues: unknown[] }).allowedValues)}`;
    } else if (e.keyword === 'const') {
      message = `${where}: must be ${show((e.params as { allowedValue: unknown }).allowedValue)}`;
    } else if (e.keyword === 'pattern') {
      if (segs.length === 1 && segs[0] === 'start') message = `start: ${show(value)} is not a UTC time such as 2026-01-01T00:00:00Z`;
      else if (def === 'peers') message = `${where}: must contain {n}, where each host's number goes`;
      else message = `${where}: ${show(value)} does not match ${(e.params as { pattern: string }).pattern}`;
    } else if (e.keyword === 'minProperties' && def === 'step') {
      message = 'a step needs a name, such as "follow: { as: …, target: … }"';
    } else if (e.keyword === 'maxProperties' && def === 'step') {
      message = `a step is one name and its value, this one has ${list(Object.keys(value as object))} (indent the fields under the step's name)`;
    } else if (e.keyword === 'minimum' || e.keyword === 'maximum') {
      message = `${where}: must be at ${e.keyword === 'minimum' ? 'least' : 'most'} ${(e.params as { limit: number }).limit}`;
    } else if (e.keyword === 'minItems') {
      const n = (e.params as { limit: number }).limit;
      message = `${where}: needs at least ${n} item${n === 1 ? '' : 's'}`;
    } else if (e.keyword === 'minLength') {
      message = `${where}: must not be empty`;
    } else if (e.keyword === 'maxLength') {
      message = `${where}: at most ${(e.params as { limit: number }).limit} characters`;
    } else {
      message = `${where}: ${e.message}`;
    }
    out.push({ line, message });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Seeded choices (down_fraction): the same seed picks the same hosts on every machine.

/** A seeded stream of numbers in [0, 1): the same for the same seed and salt on every machine. */
export function seededRandom(seed: number, salt: string): () => number {
  // FNV-1a over the seed and the salt, then mulberry32.
  let h = 0x811c9dc5;
  for (const ch of `${seed}:${salt}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  let a = h >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `peer*.test` → a matcher; `*` matches any run of characters. */
function globMatcher(pattern: string): (host: string) => boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return (host) => re.test(host);
}

// ---------------------------------------------------------------------------------------------
// The reference pass.

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const bool = (v: unknown, dflt: boolean): boolean => (typeof v === 'boolean' ? v : dflt);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

interface NamedStatus {
  line: number;
  author: string | undefined;
  poll?: { options: number; multiple: boolean };
  deletedAt?: number;
  voters: Set<string>;
}

class Checker {
  readonly problems: { line: number; message: string }[] = [];
  readonly instances = new Map<string, InstanceSpec>();
  readonly accounts = new Map<string, AccountSpec>();
  /** Up or, when crashed, the crash step's line. */
  private readonly down = new Map<string, number>();
  private readonly statuses = new Map<string, NamedStatus>();
  /** Every status name the file defines, with its first line: "named only later" beats "unknown". */
  private readonly laterNames = new Map<string, number>();
  /** Instance domain blocks, checked once every instance (generated ones too) is known. */
  private readonly pendingDomains: { segs: Segment[]; domain: string; owner: string }[] = [];

  private readonly raw: Record<string, unknown>;
  private readonly lines: Lines;
  private readonly seed: number;
  constructor(raw: Record<string, unknown>, lines: Lines, seed: number) {
    this.raw = raw;
    this.lines = lines;
    this.seed = seed;
  }

  problem(segs: readonly Segment[], message: string): void {
    this.problems.push({ line: this.lines.of(segs), message });
  }

  // -- declarations ----------------------------------------------------------------------------

  declareInstances(): void {
    const declared = obj(this.raw.instances) ?? {};
    for (const [name, value] of Object.entries(declared)) {
      const cfg = obj(value) ?? {};
      const software = (str(cfg.software) ?? 'roost') as Software;
      const segs = ['instances', name];
      if (software !== 'roost') {
        for (const key of ['registrations', 'federation', 'authorized_fetch', 'domain_blocks'])
          if (key in cfg) this.problem([...segs, key], `instance ${name}: ${key} is for full Roost instances, and ${name} is a light ${software} peer`);
      }
      const blocks = Array.isArray(cfg.domain_blocks) ? cfg.domain_blocks : [];
      const domainBlocks: InstanceSpec['domainBlocks'] = [];
      blocks.forEach((b, i) => {
        const domain = str(obj(b)?.domain);
        if (domain === undefined) return;
        domainBlocks.push({ domain, severity: (str(obj(b)?.severity) ?? 'suspend') as 'silence' | 'suspend' | 'noop' });
        this.pendingDomains.push({ segs: [...segs, 'domain_blocks', i, 'domain'], domain, owner: name });
      });
      this.instances.set(name, {
        name,
        software,
        registrations: (str(cfg.registrations) ?? 'open') as InstanceSpec['registrations'],
        federationMode: (str(cfg.federation) ?? 'open') as InstanceSpec['federationMode'],
        authorizedFetch: bool(cfg.authorized_fetch, false),
        domainBlocks,
        line: this.lines.of(segs),
      });
    }

    const generators = Array.isArray(this.raw.peers) ? this.raw.peers : [];
    generators.forEach((g, i) => {
      const gen = obj(obj(g)?.generate);
      const pattern = str(gen?.pattern);
      const count = num(gen?.count);
      if (!gen || pattern === undefined || !pattern.includes('{n}') || count === undefined || !Number.isInteger(count) || count < 1) return;
      const first = num(gen.first) ?? 1;
      // `peers` are light peers unless told otherwise: that is what one declares by the hundred.
      const software = (Array.isArray(gen.software) ? gen.software : [gen.software ?? 'mastodon']).map(String) as Software[];
      const segs = ['peers', i, 'generate'];
      const line = this.lines.of(segs);
      for (let k = 0; k < count; k++) {
        const name = pattern.replace('{n}', String(first + k));
        if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/.test(name)) {
          this.problem([...segs, 'pattern'], `peers: "${name}" is not a host name such as peer1.test`);
          return;
        }
        const taken = this.instances.get(name);
        if (taken) {
          this.problem(segs, `peers: ${name} is already declared (line ${taken.line})`);
          continue;
        }
        this.instances.set(name, {
          name,
          software: software[k % software.length]!,
          registrations: 'open',
          federationMode: 'open',
          authorizedFetch: false,
          domainBlocks: [],
          line,
        });
      }
    });

    if (this.instances.size === 0 && obj(this.raw.instances)) this.problem(['instances'], 'instances: declare at least one');
    for (const p of this.pendingDomains) {
      if (p.domain === p.owner) this.problem(p.segs, `instance ${p.owner}: blocks its own domain`);
      else this.instance(p.segs, p.domain);
    }
  }

  declareAccounts(): void {
    for (const [handle, value] of Object.entries(obj(this.raw.accounts) ?? {})) {
      const at = handle.lastIndexOf('@');
      if (at <= 0) continue; // the schema's handle pattern reported it
      const username = handle.slice(0, at);
      const instance = handle.slice(at + 1);
      const segs = ['accounts', handle];
      if (!this.instances.has(instance)) {
        this.problem(segs, `account ${handle}: instance ${instance} is not declared${didYouMean(instance, this.instances.keys())}`);
      }
      const cfg = obj(value) ?? {};
      this.accounts.set(handle, {
        handle,
        username,
        instance,
        ...(str(cfg.display_name) !== undefined ? { displayName: str(cfg.display_name) } : {}),
        locked: bool(cfg.locked, false),
        bot: bool(cfg.bot, false),
        line: this.lines.of(segs),
      });
    }
  }

  // -- references --------------------------------------------------------------------------------

  /** A declared instance's name, or undefined (with a problem when it was a string). */
  instance(segs: readonly Segment[], value: unknown): string | undefined {
    const name = str(value);
    if (name === undefined) return undefined;
    if (!this.instances.has(name)) {
      this.problem(segs, `${describe(segs)}: instance ${name} is not declared${didYouMean(name, this.instances.keys())}`);
      return undefined;
    }
    return name;
  }

  /** Hosts a rule or partition names: `*` stays, a pattern becomes the hosts it matches. */
  hosts(segs: readonly Segment[], value: unknown, allowStar: boolean): string[] | undefined {
    const name = str(value);
    if (name === undefined) return undefined;
    if (name === '*') {
      if (allowStar) return ['*'];
      this.problem(segs, `${describe(segs)}: "*" is not allowed here; name the hosts (patterns such as peer*.test are)`);
      return undefined;
    }
    if (name.includes('*')) {
      const match = globMatcher(name);
      const hosts = [...this.instances.keys()].filter(match);
      if (!hosts.length) this.problem(segs, `${describe(segs)}: pattern ${name} matches no instance`);
      return hosts.length ? hosts : undefined;
    }
    return this.instance(segs, name) === undefined ? undefined : [name];
  }

  /**
   * A declared account. `acting`: the step's kind when this account does the step, which a light
   * peer's account may do only for PEER_STEPS, and which needs its instance running.
   */
  account(segs: readonly Segment[], value: unknown, acting?: string): string | undefined {
    const handle = str(value);
    if (handle === undefined) return undefined;
    const account = this.accounts.get(handle);
    if (!account) {
      this.problem(segs, `${describe(segs)}: account ${handle} is not declared${didYouMean(handle, this.accounts.keys())}`);
      return undefined;
    }
    if (acting !== undefined) {
      const software = this.instances.get(account.instance)?.software;
      if (software && software !== 'roost' && !PEER_STEPS.includes(acting)) {
        this.problem(segs, `${acting}: ${handle} is on a light ${software} peer, whose accounts can only ${PEER_STEPS.slice(0, -1).join(', ')} and ${PEER_STEPS.at(-1)}`);
      }
      this.running(segs, account.instance);
    }
    return handle;
  }

  /** A step that needs `instance` to answer, while it is crashed. */
  running(segs: readonly Segment[], instance: string): void {
    const crashedAt = this.down.get(instance);
    if (crashedAt !== undefined) this.problem(segs, `${describe(segs)}: ${instance} is down (crashed at line ${crashedAt})`);
  }

  /** A status named by an earlier step. `use`: what the step does to it, for the deleted check. */
  status(segs: readonly Segment[], value: unknown, use?: string): NamedStatus | undefined {
    const name = str(value);
    if (name === undefined) return undefined;
    const status = this.statuses.get(name);
    if (!status) {
      const later = this.laterNames.get(name);
      const why = later !== undefined ? `is named only later (line ${later})` : `is not named by an earlier step${didYouMean(name, this.statuses.keys())}`;
      this.problem(segs, `${describe(segs)}: status ${name} ${why}`);
      return undefined;
    }
    if (use && status.deletedAt !== undefined) this.problem(segs, `${describe(segs)}: cannot ${use} ${name}, deleted at line ${status.deletedAt}`);
    return status;
  }

  private nameStatus(segs: readonly Segment[], name: unknown, status: NamedStatus): void {
    const n = str(name);
    if (n === undefined) return;
    const earlier = this.statuses.get(n);
    if (earlier) this.problem(segs, `${describe(segs)}: status name ${n} is already used (line ${earlier.line})`);
    else this.statuses.set(n, status);
  }

  // -- network -----------------------------------------------------------------------------------

  linkFields(segs: readonly Segment[], v: Record<string, unknown>): Partial<LinkSpec> {
    const out: Partial<LinkSpec> = {};
    const latency = parseDuration(v.latency);
    if (latency !== null) out.latencyMs = latency;
    const jitter = parseDuration(v.jitter);
    if (jitter !== null) out.jitterMs = jitter;
    for (const k of ['loss', 'duplicate', 'reorder'] as const) if (num(v[k]) !== undefined) out[k] = num(v[k]);
    const slow = parseDuration(v.slow);
    if (slow !== null) out.slowMs = slow;
    if (typeof v.down === 'boolean') out.down = v.down;
    const errors = obj(v.errors);
    if (errors) {
      out.errors = Object.fromEntries(Object.entries(errors).map(([k, p]) => [k, Number(p)]));
      const sum = Object.values(out.errors).reduce((a, b) => a + b, 0);
      if (sum > 1) this.problem([...segs, 'errors'], `${describe([...segs, 'errors'])}: the probabilities add up to ${sum}, more than 1`);
    }
    const dist = obj(v.latency_distribution);
    if (dist) {
      const [mean, min, max] = [parseDuration(dist.mean), parseDuration(dist.min), parseDuration(dist.max)];
      if (mean !== null && min !== null && max !== null) {
        const where = describe([...segs, 'latency_distribution']);
        if (!(min <= mean && mean <= max)) this.problem([...segs, 'latency_distribution'], `${where}: needs min ≤ mean ≤ max`);
        else if (min === max) this.problem([...segs, 'latency_distribution'], `${where}: min and max are equal; use latency for a fixed one`);
        out.latencyDist = { kind: 'lognormal', meanMs: mean, minMs: min, maxMs: max } satisfies LatencyDistribution;
      }
    }
    return out;
  }

  /** A rule of the file → rules of the contract (host names or `*`), in the file's order. */
  linkRules(segs: readonly Segment[], v: Record<string, unknown>, inStep: boolean): LinkRule[] {
    const fields = this.linkFields(segs, v);
    const line = this.lines.of(segs);
    let from: string[] | undefined;
    let to: string[] | undefined;
    // A step's rule is read as network.links' are: patterns become hosts, down_fraction a seeded
    // choice of them (servers that go down mid-run, after their follows).
    from = this.hosts([...segs, 'from'], v.from, true);
    to = this.hosts([...segs, 'to'], v.to, true);
    if (!from || !to) return [];
    const rules: LinkRule[] = [];
    // A rule that only carries down_fraction changes nothing else: no empty rule per host.
    if (Object.keys(fields).length || (inStep && v.down_fraction === undefined)) for (const f of from) for (const t of to) rules.push({ from: f, to: t, ...fields, line });
    const fraction = num(v.down_fraction);
    if (fraction !== undefined && fraction > 0) {
      const pool = to[0] === '*' ? [...this.instances.keys()] : to;
      const random = seededRandom(this.seed, `down_fraction:${line}`);
      const chosen = [...pool];
      const k = Math.round(fraction * pool.length);
      // A partial Fisher–Yates: the first k of a seeded shuffle, then in declaration order again.
      for (let i = 0; i < k; i++) {
        const j = i + Math.floor(random() * (chosen.length - i));
        [chosen[i], chosen[j]] = [chosen[j]!, chosen[i]!];
      }
      const down = new Set(chosen.slice(0, k));
      for (const f of from) for (const t of pool) if (down.has(t)) rules.push({ from: f, to: t, down: true, line });
    }
    return rules;
  }

  network(): Scenario['network'] {
    const raw = obj(this.raw.network) ?? {};
    const defaults: LinkSpec = { ...DEFAULT_LINK, errors: {}, ...this.linkFields(['network'], raw) };
    const links: LinkRule[] = [];
    (Array.isArray(raw.links) ? raw.links : []).forEach((r, i) => {
      const rule = obj(r);
      if (rule) links.push(...this.linkRules(['network', 'links', i], rule, false));
    });
    return { defaults, links };
  }

  // -- steps ---------------------------------------------------------------------------------------

  steps(): Step[] {
    const raw = Array.isArray(this.raw.steps) ? this.raw.steps : [];
    raw.forEach((s, i) => {
      const entry = obj(s);
      if (!entry) return;
      for (const kind of ['post', 'reply'])
        if (kind in entry) {
          const n = str(obj(entry[kind])?.name);
          if (n !== undefined && !this.laterNames.has(n)) this.laterNames.set(n, this.lines.of(['steps', i]));
        }
    });
    const out: Step[] = [];
    raw.forEach((s, i) => {
      const entry = obj(s);
      const keys = entry ? Object.keys(entry) : [];
      if (!entry || keys.length !== 1) return; // the schema reported it
      const kind = keys[0]!;
      if (!(STEP_KINDS as readonly string[]).includes(kind)) return;
      const step = this.step(['steps', i, kind], kind, entry[kind], this.lines.of(['steps', i]));
      if (step) out.push(step);
    });
    return out;
  }

  private step(segs: Segment[], kind: string, value: unknown, line: number): Step | undefined {
    const v = obj(value) ?? {};
    const at = (...more: Segment[]) => [...segs, ...more];
    switch (kind) {
      case 'follow':
      case 'unfollow':
      case 'block': {
        const as = this.account(at('as'), v.as, kind);
        const target = this.account(at('target'), v.target);
        if (as && as === target) this.problem(at('target'), `${kind}: ${as} cannot ${kind} itself`);
        return as && target ? { kind, as, target, line } : undefined;
      }
      case 'post': {
        const as = this.account(at('as'), v.as, kind);
        const pollRaw = obj(v.poll);
        let poll: { options: string[]; expiresInMs: number; multiple: boolean } | undefined;
        if (pollRaw) {
          const options = Array.isArray(pollRaw.options) ? pollRaw.options.map(String) : [];
          const expiresInMs = parseDuration(pollRaw.expires_in) ?? 0;
          poll = { options, expiresInMs, multiple: bool(pollRaw.multiple, false) };
          this.pollLimits(at('poll'), as, poll);
        }
        this.nameStatus(at('name'), v.name, {
          line,
          author: as,
          ...(poll ? { poll: { options: poll.options.length, multiple: poll.multiple } } : {}),
          voters: new Set(),
        });
        if (!as || typeof v.text !== 'string') return undefined;
        return {
          kind,
          as,
          text: v.text,
          ...(str(v.name) !== undefined ? { name: str(v.name) } : {}),
          visibility: (str(v.visibility) ?? 'public') as Visibility,
          ...(poll ? { poll } : {}),
          line,
        };
      }
      case 'reply': {
        const as = this.account(at('as'), v.as, kind);
        const to = this.status(at('to'), v.to, 'reply to');
        this.nameStatus(at('name'), v.name, { line, author: as, voters: new Set() });
        if (!as || !to || typeof v.text !== 'string') return undefined;
        return {
          kind,
          as,
          to: v.to as string,
          text: v.text,
          ...(str(v.name) !== undefined ? { name: str(v.name) } : {}),
          visibility: (str(v.visibility) ?? 'public') as Visibility,
          line,
        };
      }
      case 'boost':
      case 'like':
      case 'open':
      case 'delete': {
        const as = this.account(at('as'), v.as, kind);
        const status = this.status(at('status'), v.status, kind);
        if (kind === 'delete' && as && status?.author && status.author !== as) {
          this.problem(at('as'), `delete: ${as} cannot delete ${String(v.status)}, posted by ${status.author}`);
        }
        if (kind === 'delete' && status && status.deletedAt === undefined) status.deletedAt = line;
        return as && status ? { kind, as, status: v.status as string, line } : undefined;
      }
      case 'edit': {
        const as = this.account(at('as'), v.as, kind);
        const status = this.status(at('status'), v.status, kind);
        if (as && status?.author && status.author !== as) {
          this.problem(at('as'), `edit: ${as} cannot edit ${String(v.status)}, posted by ${status.author}`);
        }
        return as && status && typeof v.text === 'string' ? { kind, as, status: v.status as string, text: v.text, line } : undefined;
      }
      case 'vote': {
        const as = this.account(at('as'), v.as, kind);
        const status = this.status(at('poll'), v.poll, 'vote on');
        const choices = Array.isArray(v.choices) ? v.choices.filter((c): c is number => Number.isInteger(c)) : [];
        if (status && !status.poll) this.problem(at('poll'), `vote.poll: status ${String(v.poll)} is not a poll (line ${status.line})`);
        if (status?.poll) {
          const n = status.poll.options;
          const bad = choices.filter((c) => c < 0 || c >= n);
          if (bad.length) this.problem(at('choices'), `vote.choices: ${list(bad)} out of range, poll ${String(v.poll)} has ${n} options (0 to ${n - 1})`);
          if (new Set(choices).size !== choices.length) this.problem(at('choices'), `vote.choices: a choice is listed twice`);
          if (!status.poll.multiple && choices.length > 1) this.problem(at('choices'), `vote.choices: poll ${String(v.poll)} takes one choice, not ${choices.length}`);
          if (as && !status.poll.multiple && status.voters.has(as)) this.problem(at('as'), `vote: ${as} has already voted on ${String(v.poll)}`);
          if (as) status.voters.add(as);
        }
        return as && status?.poll ? { kind, as, poll: v.poll as string, choices, line } : undefined;
      }
      case 'move': {
        const from = this.account(at('from'), v.from, kind);
        const to = this.account(at('to'), v.to, kind);
        if (from && from === to) this.problem(at('to'), `move: ${from} cannot move to itself`);
        return from && to ? { kind, from, to, line } : undefined;
      }
      case 'report': {
        const as = this.account(at('as'), v.as, kind);
        const target = this.account(at('target'), v.target);
        if (as && as === target) this.problem(at('target'), `report: ${as} cannot report itself`);
        const statuses: string[] = [];
        (Array.isArray(v.statuses) ? v.statuses : []).forEach((name, i) => {
          const status = this.status(at('statuses', i), name);
          if (!status) return;
          if (target && status.author && status.author !== target) {
            this.problem(at('statuses', i), `report.statuses: ${String(name)} was posted by ${status.author}, not ${target}`);
          }
          statuses.push(name as string);
        });
        return as && target ? { kind, as, target, statuses, comment: str(v.comment) ?? '', forward: bool(v.forward, false), line } : undefined;
      }
      case 'domain_block': {
        const on = this.instance(at('on'), v.on);
        const domain = this.instance(at('domain'), v.domain);
        if (on) {
          const software = this.instances.get(on)!.software;
          if (software !== 'roost') this.problem(at('on'), `domain_block.on: ${on} is a light ${software} peer; only a Roost instance takes a domain block`);
          this.running(at('on'), on);
        }
        if (on && on === domain) this.problem(at('domain'), `domain_block: ${on} cannot block itself`);
        return on && domain ? { kind, on, domain, severity: (str(v.severity) ?? 'suspend') as 'silence' | 'suspend', line } : undefined;
      }
      case 'advance': {
        const ms = parseDuration(value);
        return ms === null ? undefined : { kind, ms, line };
      }
      case 'partition': {
        const groups: string[][] = [];
        const seen = new Map<string, number>();
        (Array.isArray(value) ? value : []).forEach((g, gi) => {
          const group: string[] = [];
          (Array.isArray(g) ? g : []).forEach((h, hi) => {
            for (const host of this.hosts(at(gi, hi), h, false) ?? []) {
              const other = seen.get(host);
              if (other !== undefined && other !== gi) this.problem(at(gi, hi), `partition: ${host} is in two groups`);
              else if (other === undefined) group.push(host);
              seen.set(host, gi);
            }
          });
          groups.push(group);
        });
        return { kind, groups, line };
      }
      case 'heal':
        return { kind, line };
      case 'link': {
        const rules = this.linkRules(segs, v, true);
        return rules.length > 0 ? { kind, rules, line } : undefined;
      }
      case 'crash':
      case 'restart': {
        const instance = this.instance(segs, value);
        if (!instance) return undefined;
        const crashedAt = this.down.get(instance);
        if (kind === 'crash' && crashedAt !== undefined) this.problem(segs, `crash: ${instance} is already down (crashed at line ${crashedAt})`);
        else if (kind === 'restart' && crashedAt === undefined) this.problem(segs, `restart: ${instance} is running (no crash before this step)`);
        if (kind === 'crash' && crashedAt === undefined) this.down.set(instance, line);
        else if (kind === 'restart') this.down.delete(instance);
        return { kind, instance, line };
      }
      case 'expect': {
        const withinMs = parseDuration(v.within ?? 0);
        const kinds = ASSERTION_KINDS.filter((k) => k in v);
        if (kinds.length !== 1) return undefined; // the schema reported it
        const assertion = this.assertion([...segs, kinds[0]!], kinds[0]!, obj(v[kinds[0]!]) ?? {});
        return assertion && withinMs !== null ? { kind, assertion, withinMs, line } : undefined;
      }
    }
    return undefined;
  }

  private pollLimits(segs: Segment[], as: string | undefined, poll: { options: string[]; expiresInMs: number }): void {
    // A Roost author's poll meets Roost's limits, which are Mastodon's: better said now than as a
    // 422 half-way through a run. (A peer's account posts under its own software's rules.)
    const instance = as ? this.instances.get(this.accounts.get(as)!.instance) : undefined;
    if (instance?.software !== 'roost') return;
    const limits = MASTODON_LIMITS.polls;
    if (poll.options.length > limits.maxOptions) this.problem([...segs, 'options'], `post.poll.options: Roost takes at most ${limits.maxOptions} options, not ${poll.options.length}`);
    const long = poll.options.find((o) => [...o].length > limits.maxCharactersPerOption);
    if (long !== undefined) this.problem([...segs, 'options'], `post.poll.options: "${long}" is longer than ${limits.maxCharactersPerOption} characters`);
    if (poll.expiresInMs && (poll.expiresInMs < limits.minExpiration * 1000 || poll.expiresInMs > limits.maxExpiration * 1000)) {
      this.problem([...segs, 'expires_in'], `post.poll.expires_in: Roost takes 5m to ${limits.maxExpiration}s (about a month)`);
    }
  }

  private onList(segs: Segment[], value: unknown): string[] | undefined {
    const names = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
    const out: string[] = [];
    names.forEach((n, i) => {
      const s = typeof value === 'string' ? segs : [...segs, i];
      const name = this.instance(s, n);
      if (name) {
        this.running(s, name);
        out.push(name);
      }
    });
    return out.length === names.length && out.length ? out : undefined;
  }

  private onOne(segs: Segment[], value: unknown): string | undefined {
    const name = this.instance(segs, value);
    if (name) this.running(segs, name);
    return name;
  }

  private assertion(segs: Segment[], kind: (typeof ASSERTION_KINDS)[number], v: Record<string, unknown>): Assertion | undefined {
    const at = (...more: Segment[]) => [...segs, ...more];
    switch (kind) {
      case 'visible':
      case 'not_visible': {
        const status = this.status(at('status'), v.status);
        const on = this.onOne(at('on'), v.on);
        const viewer = v.viewer === undefined ? undefined : this.account(at('viewer'), v.viewer);
        if (viewer && on && this.accounts.get(viewer)!.instance !== on) {
          this.problem(at('viewer'), `${kind}.viewer: ${viewer} is not an account of ${on}, where the status is read`);
        }
        if (!status || !on || (v.viewer !== undefined && !viewer)) return undefined;
        return { kind, status: v.status as string, on, ...(viewer ? { viewer } : {}) };
      }
      case 'followers': {
        const account = this.account(at('account'), v.account);
        const on = this.onList(at('on'), v.on);
        const count = num(v.count);
        return account && on && count !== undefined ? { kind, account, on, count } : undefined;
      }
      case 'poll': {
        const status = this.status(at('status'), v.status);
        if (status && !status.poll) this.problem(at('status'), `poll.status: status ${String(v.status)} is not a poll (line ${status.line})`);
        const on = this.onList(at('on'), v.on);
        const votes = Array.isArray(v.votes) ? (v.votes as number[]) : undefined;
        if (votes && status?.poll && votes.length !== status.poll.options) {
          this.problem(at('votes'), `poll.votes: ${votes.length} tallies for a poll of ${status.poll.options} options`);
        }
        return status?.poll && on ? { kind, status: v.status as string, on, ...(votes ? { votes } : {}) } : undefined;
      }
      case 'thread': {
        const status = this.status(at('status'), v.status);
        const on = this.onOne(at('on'), v.on);
        const replies = num(v.replies);
        const atLeast = num(v.at_least);
        if (replies === undefined && atLeast === undefined) return undefined;
        return status && on ? { kind, status: v.status as string, on, ...(replies !== undefined ? { replies } : { atLeast: atLeast! }) } : undefined;
      }
      case 'following': {
        const account = this.account(at('account'), v.account);
        const target = this.account(at('target'), v.target);
        const on = this.onOne(at('on'), v.on);
        return account && target && on ? { kind, account, target, on } : undefined;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * Parses and checks a scenario. Throws ScenarioError with every problem found, each with its
 * 1-based line, sorted by line; returns a scenario the runner can trust otherwise.
 */
/** `seed` overrides the file's (`roost lab run --seed`): every seeded choice follows it. */
export function parseScenario(text: string, file: string, opts: { seed?: number } = {}): Scenario {
  const counter = new LineCounter();
  // prettyErrors off: the message stays one sentence and the line comes from the counter.
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const lines = new Lines(doc, counter);
  if (doc.errors.length) {
    throw new ScenarioError(
      file,
      doc.errors.map((e) => ({ line: lines.at(e.pos[0]), message: `malformed YAML: ${e.message.split('\n')[0]}` })),
    );
  }

  const data: unknown = doc.toJS({ maxAliasCount: 1000 });
  const problems = schemaProblems(data, lines);
  const raw = obj(data);
  if (!raw) throw new ScenarioError(file, problems.length ? problems : [{ line: 1, message: 'the file must be a map' }]);

  const seed = opts.seed ?? (Number.isInteger(raw.seed) && (raw.seed as number) >= 0 ? (raw.seed as number) : 1);
  const startText = str(raw.start) ?? DEFAULT_START;
  const start = new Date(startText);
  if (Number.isNaN(start.getTime())) problems.push({ line: lines.of(['start']), message: `start: ${startText} is not a date` });

  const checker = new Checker(raw, lines, seed);
  checker.declareInstances();
  checker.declareAccounts();
  const network = checker.network();
  const steps = checker.steps();
  problems.push(...checker.problems);

  if (problems.length) {
    // One problem reported twice (the schema and the references both saw it) is said once.
    const seen = new Set<string>();
    const unique = problems.filter((p) => {
      const key = `${p.line}\0${p.message}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
    throw new ScenarioError(file, unique.sort((a, b) => a.line - b.line));
  }
  return {
    name: raw.name as string,
    ...(str(raw.description) !== undefined ? { description: str(raw.description) } : {}),
    file,
    seed,
    start,
    instances: [...checker.instances.values()],
    network,
    accounts: [...checker.accounts.values()],
    steps,
  };
}

/** Reads and parses a scenario file (its path is the `file` every problem names). */
export async function loadScenario(file: string, opts: { seed?: number } = {}): Promise<Scenario> {
  return parseScenario(await readFile(file, 'utf8'), file, opts);
}
