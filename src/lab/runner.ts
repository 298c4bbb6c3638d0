/**
 * Runs a scenario: starts its lab, makes its accounts, plays its steps in order and records every
 * step and assertion in the trace. Steps a person does go through the instance's Mastodon REST
 * API with the account's own token, over the instance's loopback listener (a client talks to its
 * own server; only servers talk across the virtual network). What Mastodon has no REST API for —
 * a move, an instance's domain block — goes through the operator's use cases, as the CLI does.
 * Assertions read an instance as its users would (the REST API) or, for counts no API gives
 * without side effects (a thread's replies known, follows agreed), its database.
 */
import type { Logger } from 'pino';
import { createLocalAccount } from '../services/accounts.ts';
import { mintAccessToken } from '../services/operator-access.ts';
import { createDomainBlock } from '../services/domain-blocks.ts';
import { migrateLocalAccount, setAccountAliases } from '../services/moves.ts';
import { accountResolver } from '../federation/lookup.ts';
import { Lab, type PeerFactory } from './lab.ts';
import type { LabPeer } from './peers/index.ts';
import { loopbackHost } from './network.ts';
import type { Assertion, Scenario, Step } from './scenario-types.ts';
import { createTraceWriter, type TraceWriter } from './trace.ts';
import type { TraceRecord } from './trace-format.ts';

export interface RunOptions {
  /** Where the trace goes (JSON Lines); null keeps it in memory only. */
  tracePath: string | null;
  log: Logger;
  workDir: string;
  databaseUrl?: string;
  createPeer?: PeerFactory;
  /** Changes the lab's instances before the steps run (a test or a variant of a scenario). */
  poolMax?: number;
}

export interface AssertionResult {
  line: number;
  assertion: string;
  ok: boolean;
  convergedMs: number | null;
  detail: string;
}

export interface RunResult {
  scenario: string;
  passed: number;
  failed: number;
  steps: { line: number; step: string; ok: boolean; detail?: string }[];
  assertions: AssertionResult[];
  simulatedMs: number;
  wallMs: number;
  records: readonly TraceRecord[];
}

interface KnownStatus {
  /** The status it answers (a reply), by name. */
  parent?: string;
  visibility: string;
  deleted: boolean;
  home: string;
  author: string;
  uri: string;
  /** Its id on each Roost instance where it was found. */
  ids: Map<string, string>;
  poll: boolean;
}

interface Answer {
  status: number;
  json: any;
}

export class StepFailed extends Error {
  override name = 'StepFailed';
}

function describeStep(step: Step): string {
  const { line: _line, kind, ...rest } = step as Step & Record<string, unknown>;
  return `${kind} ${JSON.stringify(rest)}`;
}

export function describeAssertion(a: Assertion): string {
  const { kind, ...rest } = a as Assertion & Record<string, unknown>;
  return `${kind} ${JSON.stringify(rest)}`;
}

class ScenarioRun {
  readonly lab: Lab;
  readonly trace: TraceWriter;
  private readonly scenario: Scenario;
  private readonly tokens = new Map<string, string>();
  private readonly accountIds = new Map<string, string>();
  private readonly statuses = new Map<string, KnownStatus>();
  readonly steps: RunResult['steps'] = [];
  readonly assertions: AssertionResult[] = [];

  constructor(scenario: Scenario, lab: Lab, trace: TraceWriter) {
    this.scenario = scenario;
    this.lab = lab;
    this.trace = trace;
  }

  private split(handle: string): { username: string; host: string } {
    const at = handle.lastIndexOf('@');
    return { username: handle.slice(0, at), host: handle.slice(at + 1) };
  }

  private peer(host: string): LabPeer | null {
    return this.lab.peers.get(host) ?? null;
  }

  actorUri(handle: string): string {
    const { username, host } = this.split(handle);
    const peer = this.peer(host);
    return peer ? peer.actorUri(username) : `http://${host}/users/${username}`;
  }

  /** A REST call on an instance, as `as` (a handle) or anonymously. */
  async api(host: string, method: string, path: string, body?: unknown, as?: string): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (as) headers.authorization = `Bearer ${this.tokens.get(as)}`;
    let payload: Uint8Array | null = null;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = Buffer.from(JSON.stringify(body));
    }
    const instance = this.lab.instance(host);
    if (!instance.roost) throw new StepFailed(`${host} is down`);
    const res = await loopbackHost(host, () => instance.roost?.port ?? 0).handle({ method, url: new URL(`http://${host}${path}`), headers, body: payload });
    const text = Buffer.from(res.body).toString('utf8');
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: res.status, json };
  }

  private async ok(host: string, method: string, path: string, body?: unknown, as?: string): Promise<any> {
    const res = await this.api(host, method, path, body, as);
    if (res.status < 200 || res.status >= 300) {
      throw new StepFailed(`${method} ${path} on ${host} answered ${res.status}: ${JSON.stringify(res.json)?.slice(0, 200)}`);
    }
    return res.json;
  }

  async setUp(): Promise<void> {
    for (const account of this.scenario.accounts) {
      const peer = this.peer(account.instance);
      if (peer) {
        await peer.addAccount(account.username, { displayName: account.displayName, locked: account.locked, bot: account.bot });
        continue;
      }
      const services = this.lab.instance(account.instance).roost!.services;
      const { account: created } = await createLocalAccount(services, {
        username: account.username,
        email: `${account.username}@${account.instance}`,
        confirmed: true,
        approved: true,
      });
      const { token } = await mintAccessToken(services, account.username, 'read write follow push');
      this.tokens.set(account.handle, token);
      this.accountIds.set(`${account.instance}|${account.handle}`, created.id);
      if (account.displayName !== undefined || account.locked || account.bot) {
        await this.ok(
          account.instance,
          'PATCH',
          '/api/v1/accounts/update_credentials',
          { ...(account.displayName !== undefined ? { display_name: account.displayName } : {}), locked: account.locked, bot: account.bot },
          account.handle,
        );
      }
    }
    await this.lab.drain();
  }

  /** The account's id on `viewer`'s instance, looked up (and fetched from its server) as the viewer. */
  private async accountIdOn(viewer: string, handle: string): Promise<string> {
    const host = this.split(viewer).host;
    const key = `${host}|${handle}`;
    const known = this.accountIds.get(key);
    if (known) return known;
    const found = await this.ok(host, 'GET', `/api/v2/search?type=accounts&resolve=true&limit=1&q=${encodeURIComponent(`@${handle}`)}`, undefined, viewer);
    const id = found?.accounts?.[0]?.id;
    if (!id) throw new StepFailed(`${handle} cannot be found from ${host}`);
    this.accountIds.set(key, id);
    return id;
  }

  private known(name: string): KnownStatus {
    const s = this.statuses.get(name);
    if (!s) throw new StepFailed(`no status named ${name} was posted`);
    return s;
  }

  /** The status's id on `viewer`'s instance: its own, or looked up (and fetched) by its URI. */
  private async statusIdOn(viewer: string, name: string): Promise<string> {
    const s = this.known(name);
    const host = this.split(viewer).host;
    const id = s.ids.get(host);
    if (id) return id;
    const found = await this.ok(host, 'GET', `/api/v2/search?type=statuses&resolve=true&limit=1&q=${encodeURIComponent(s.uri)}`, undefined, viewer);
    const fid = found?.statuses?.[0]?.id;
    if (!fid) throw new StepFailed(`${name} cannot be found from ${host}`);
    s.ids.set(host, fid);
    return fid;
  }

  private async postAs(as: string, opts: { text: string; visibility: string; inReplyTo?: string; poll?: { options: string[]; expiresInMs: number; multiple: boolean }; name?: string }): Promise<void> {
    const { username, host } = this.split(as);
    const peer = this.peer(host);
    let uri: string;
    const ids = new Map<string, string>();
    let text = opts.text;
    if (opts.inReplyTo) {
      // As a client writes a reply: the author mentioned, so their server gets it.
      const parent = this.known(opts.inReplyTo);
      if (parent.author !== as && !text.includes('@')) text = `@${parent.author} ${text}`;
    }
    if (peer) {
      uri = await this.lab.settleWhile(peer.post(username, { text, visibility: opts.visibility as 'public', inReplyTo: opts.inReplyTo ? this.known(opts.inReplyTo).uri : undefined }));
    } else {
      const body: Record<string, unknown> = { status: text, visibility: opts.visibility };
      if (opts.inReplyTo) body.in_reply_to_id = await this.statusIdOn(as, opts.inReplyTo);
      if (opts.poll) body.poll = { options: opts.poll.options, expires_in: Math.round(opts.poll.expiresInMs / 1000), multiple: opts.poll.multiple };
      const created = await this.ok(host, 'POST', '/api/v1/statuses', body, as);
      uri = created.uri;
      ids.set(host, created.id);
    }
    if (opts.name) this.statuses.set(opts.name, { home: host, author: as, uri, ids, poll: !!opts.poll, parent: opts.inReplyTo, visibility: opts.visibility, deleted: false });
  }

  async runStep(step: Step): Promise<void> {
    switch (step.kind) {
      case 'follow':
      case 'unfollow': {
        const { username, host } = this.split(step.as);
        const peer = this.peer(host);
        if (peer) {
          if (step.kind === 'unfollow') throw new StepFailed('light peers do not unfollow');
          await this.lab.settleWhile(peer.follow(username, this.actorUri(step.target)));
        } else {
          await this.ok(host, 'POST', `/api/v1/accounts/${await this.accountIdOn(step.as, step.target)}/${step.kind}`, {}, step.as);
        }
        break;
      }
      case 'post':
        await this.postAs(step.as, { text: step.text, visibility: step.visibility, poll: step.poll, name: step.name });
        break;
      case 'reply':
        await this.postAs(step.as, { text: step.text, visibility: step.visibility, inReplyTo: step.to, name: step.name });
        break;
      case 'boost':
      case 'like': {
        const { username, host } = this.split(step.as);
        const peer = this.peer(host);
        if (peer) await this.lab.settleWhile(step.kind === 'boost' ? peer.boost(username, this.known(step.status).uri) : peer.like(username, this.known(step.status).uri));
        else await this.ok(host, 'POST', `/api/v1/statuses/${await this.statusIdOn(step.as, step.status)}/${step.kind === 'boost' ? 'reblog' : 'favourite'}`, {}, step.as);
        break;
      }
      case 'vote': {
        const host = this.split(step.as).host;
        const status = await this.ok(host, 'GET', `/api/v1/statuses/${await this.statusIdOn(step.as, step.poll)}`, undefined, step.as);
        if (!status?.poll?.id) throw new StepFailed(`${step.poll} has no poll on ${host}`);
        await this.ok(host, 'POST', `/api/v1/polls/${status.poll.id}/votes`, { choices: step.choices.map(String) }, step.as);
        break;
      }
      case 'edit': {
        const host = this.split(step.as).host;
        await this.ok(host, 'PUT', `/api/v1/statuses/${await this.statusIdOn(step.as, step.status)}`, { status: step.text }, step.as);
        break;
      }
      case 'delete': {
        const host = this.split(step.as).host;
        await this.ok(host, 'DELETE', `/api/v1/statuses/${await this.statusIdOn(step.as, step.status)}`, undefined, step.as);
        this.known(step.status).deleted = true;
        break;
      }
      case 'open': {
        const host = this.split(step.as).host;
        if (this.peer(host)) throw new StepFailed('light peers do not open threads');
        await this.ok(host, 'GET', `/api/v1/statuses/${await this.statusIdOn(step.as, step.status)}/context`, undefined, step.as);
        break;
      }
      case 'block': {
        const host = this.split(step.as).host;
        await this.ok(host, 'POST', `/api/v1/accounts/${await this.accountIdOn(step.as, step.target)}/block`, {}, step.as);
        break;
      }
      case 'report': {
        const host = this.split(step.as).host;
        const statusIds = [];
        for (const s of step.statuses) statusIds.push(await this.statusIdOn(step.as, s));
        await this.ok(
          host,
          'POST',
          '/api/v1/reports',
          { account_id: await this.accountIdOn(step.as, step.target), status_ids: statusIds, comment: step.comment, forward: step.forward },
          step.as,
        );
        break;
      }
      case 'move': {
        const from = this.split(step.from);
        const to = this.split(step.to);
        const target = this.lab.instance(to.host).roost!;
        const origin = this.lab.instance(from.host).roost!;
        await setAccountAliases(target.services, accountResolver(target.services, target.federation), to.username, { add: [step.from] });
        await this.lab.drain();
        await migrateLocalAccount(origin.services, accountResolver(origin.services, origin.federation), { username: from.username, target: step.to });
        break;
      }
      case 'domain_block':
        await createDomainBlock(this.lab.instance(step.on).roost!.services, { domain: step.domain, severity: step.severity }, 'operator');
        break;
      case 'advance':
        await this.lab.runUntil(this.lab.clock.now().getTime() + step.ms);
        return;
      case 'partition':
        this.lab.network.partition(step.groups);
        this.trace.write({ kind: 'fault', fault: 'partition', detail: step.groups.map((g) => g.join(',')).join(' | ') });
        return;
      case 'heal':
        this.lab.network.heal();
        this.trace.write({ kind: 'fault', fault: 'heal', detail: 'every host reaches every other' });
        return;
      case 'link':
        for (const rule of step.rules) this.lab.network.addRule(rule);
        this.trace.write({ kind: 'fault', fault: 'link', detail: step.rules.map((r) => JSON.stringify({ ...r, line: undefined })).join(' ') });
        return;
      case 'crash':
        this.trace.write({ kind: 'fault', fault: 'crash', detail: step.instance });
        await this.lab.crash(step.instance);
        return;
      case 'restart':
        await this.lab.restart(step.instance);
        this.trace.write({ kind: 'fault', fault: 'restart', detail: step.instance });
        break;
      case 'expect':
        await this.expect(step);
        return;
    }
    await this.lab.drain();
  }

  private async expect(step: Extract<Step, { kind: 'expect' }>): Promise<void> {
    const from = this.lab.clock.now().getTime();
    let detail = '';
    const check = async () => {
      try {
        detail = await this.check(step.assertion);
        return detail === '';
      } catch (e) {
        detail = (e as Error).message;
        return false;
      }
    };
    const ok = await this.lab.runUntil(from + step.withinMs, check);
    const result: AssertionResult = {
      line: step.line,
      assertion: describeAssertion(step.assertion),
      ok,
      convergedMs: ok ? this.lab.clock.now().getTime() - from : null,
      detail: ok ? 'held' : detail,
    };
    this.assertions.push(result);
    this.trace.write({ kind: 'assertion', ...result });
  }

  /** '' when the assertion holds, else what was seen. */
  async check(a: Assertion): Promise<string> {
    switch (a.kind) {
      case 'visible':
      case 'not_visible': {
        const seen = await this.visible(a.status, a.on, a.viewer);
        if (a.kind === 'visible') return seen ? '' : `${a.status} is not visible on ${a.on}`;
        return seen ? `${a.status} is visible on ${a.on}` : '';
      }
      case 'followers': {
        const seen: string[] = [];
        for (const host of a.on) {
          const n = await this.followersSeen(a.account, host);
          if (n !== a.count) seen.push(`${host} counts ${n}`);
        }
        return seen.length ? `${a.account} should have ${a.count} followers: ${seen.join(', ')}` : '';
      }
      case 'poll': {
        const tallies: string[] = [];
        let first: string | null = null;
        let differ = false;
        for (const host of a.on) {
          const t = await this.pollTallies(a.status, host);
          const text = t === null ? 'unknown' : t.join(',');
          tallies.push(`${host}: ${text}`);
          if (first === null) first = text;
          else if (text !== first) differ = true;
          if (a.votes && text !== a.votes.join(',')) differ = true;
        }
        return differ ? `tallies ${tallies.join('; ')}${a.votes ? ` (expected ${a.votes.join(',')})` : ''}` : '';
      }
      case 'thread': {
        const n = await this.repliesKnown(a.status, a.on);
        if (a.atLeast !== undefined) return n >= a.atLeast ? '' : `${a.on} knows ${n} replies below ${a.status}, fewer than ${a.atLeast}`;
        return n === a.replies ? '' : `${a.on} knows ${n} of ${a.replies} replies below ${a.status}`;
      }
      case 'following': {
        const host = a.on;
        const peer = this.peer(host);
        if (peer) throw new StepFailed('following is not read on light peers');
        const id = await this.accountIdOn(a.account, a.target);
        const rel = await this.ok(host, 'GET', `/api/v1/accounts/relationships?id[]=${id}`, undefined, a.account);
        return rel?.[0]?.following ? '' : `${a.account} does not follow ${a.target} on ${host} (requested: ${rel?.[0]?.requested})`;
      }
    }
  }

  /**
   * For each thread of the scenario (a named status others answered) and each running Roost:
   * the replies a reader there sees, of the public ones the scenario posted below it.
   */
  async census(): Promise<void> {
    const below = (root: string): number => {
      let n = 0;
      for (const [name, s] of this.statuses) {
        if (s.parent !== root || s.deleted) continue;
        if (s.visibility === 'public' || s.visibility === 'unlisted') n += 1 + below(name);
      }
      return n;
    };
    for (const [name, s] of this.statuses) {
      if (s.parent !== undefined || s.deleted) continue;
      const total = below(name);
      if (total === 0) continue;
      for (const instance of this.lab.instances.values()) {
        if (!instance.roost) continue;
        this.trace.write({ kind: 'thread', status: name, instance: instance.name, known: await this.repliesKnown(name, instance.name), total });
      }
    }
  }

  private async statusRowId(host: string, uri: string): Promise<string | null> {
    const rows = await this.lab.instance(host).roost!.services.db.sql.query<{ id: string }>(
      'select id::text as id from statuses where uri = $1 and deleted_at is null',
      [uri],
    );
    return rows[0]?.id ?? null;
  }

  private async visible(name: string, host: string, viewer?: string): Promise<boolean> {
    const s = this.known(name);
    const peer = this.peer(host);
    if (peer) return peer.knows(s.uri);
    if (!this.lab.instance(host).roost) return false;
    // Arrived (not fetched now): the row is there; then read as the viewer would.
    const id = s.home === host ? (s.ids.get(host) ?? (await this.statusRowId(host, s.uri))) : await this.statusRowId(host, s.uri);
    if (!id) return false;
    const res = await this.api(host, 'GET', `/api/v1/statuses/${id}`, undefined, viewer);
    return res.status === 200;
  }

  /** The followers count `host` shows for the account (its own count, or what it knows of a remote one). */
  private async followersSeen(handle: string, host: string): Promise<number | null> {
    const peer = this.peer(host);
    const { username, host: home } = this.split(handle);
    if (peer) {
      if (home !== host) throw new StepFailed(`light peers count only their own accounts' followers (${handle} on ${host})`);
      return peer.followerCount(username);
    }
    if (!this.lab.instance(host).roost) return null;
    const rows = await this.lab.instance(host).roost!.services.db.sql.query<{ id: string }>(
      home === host ? 'select id::text as id from accounts where username = $1 and domain is null' : 'select id::text as id from accounts where uri = $1',
      [home === host ? username : this.actorUri(handle)],
    );
    if (!rows[0]) return null;
    const res = await this.api(host, 'GET', `/api/v1/accounts/${rows[0].id}`);
    return typeof res.json?.followers_count === 'number' ? res.json.followers_count : null;
  }

  private async pollTallies(name: string, host: string): Promise<number[] | null> {
    const s = this.known(name);
    const peer = this.peer(host);
    if (peer) return peer.pollTallies(s.uri);
    if (!this.lab.instance(host).roost) return null;
    const id = await this.statusRowId(host, s.uri);
    if (!id) return null;
    const res = await this.api(host, 'GET', `/api/v1/statuses/${id}`);
    const options = res.json?.poll?.options as { votes_count: number | null }[] | undefined;
    return options ? options.map((o) => o.votes_count ?? 0) : null;
  }

  private async repliesKnown(name: string, host: string): Promise<number> {
    const s = this.known(name);
    const peer = this.peer(host);
    if (peer) return peer.repliesKnown(s.uri);
    const rows = await this.lab.instance(host).roost!.services.db.sql.query<{ n: string }>(
      // The public replies a reader can see: none by a suspended account (a suspended domain's
      // included), none deleted. Read without opening the thread, which would fetch what is missing.
      `with recursive below(id) as (
         select s.id from statuses s join statuses root on s.in_reply_to_id = root.id
          join accounts a on a.id = s.account_id
          where root.uri = $1 and s.deleted_at is null and a.suspended_at is null and s.visibility in ('public', 'unlisted')
         union
         select s.id from statuses s join below b on s.in_reply_to_id = b.id
          join accounts a on a.id = s.account_id
          where s.deleted_at is null and a.suspended_at is null and s.visibility in ('public', 'unlisted')
       ) select count(*) as n from below`,
      [s.uri],
    );
    return Number(rows[0]!.n);
  }
}

export interface StartedScenario {
  lab: Lab;
  trace: TraceWriter;
  /** Plays the scenario's steps in order (each failure recorded, the run goes on). */
  play(): Promise<void>;
  /** The result so far, with the run's end written to the trace. */
  finish(): RunResult;
  /** Closes the lab and the trace. */
  close(): Promise<void>;
}

/** Starts a scenario's lab and makes its accounts; its steps wait for play(). */
export async function startScenario(scenario: Scenario, opts: RunOptions): Promise<StartedScenario> {
  const wall0 = performance.now();
  let lab: Lab | null = null;
  const trace = createTraceWriter(opts.tracePath, () => lab!.clock);
  lab = new Lab({ scenario, trace, log: opts.log, databaseUrl: opts.databaseUrl, workDir: opts.workDir, createPeer: opts.createPeer, poolMax: opts.poolMax });
  const run = new ScenarioRun(scenario, lab, trace);
  const close = async () => {
    await lab.close().catch((err) => opts.log.warn({ err }, 'lab close failed'));
    await trace.close();
  };
  try {
    trace.write({ kind: 'run.start', scenario: scenario.name, seed: scenario.seed, instances: scenario.instances.map((i) => ({ name: i.name, software: i.software })) });
    await lab.start();
    await run.setUp();
  } catch (e) {
    await close();
    throw e;
  }
  return {
    lab,
    trace,
    async play() {
      for (const step of scenario.steps) {
        const what = describeStep(step);
        try {
          await run.runStep(step);
          if (step.kind !== 'expect') {
            run.steps.push({ line: step.line, step: what, ok: true });
            trace.write({ kind: 'step', line: step.line, step: what, ok: true });
          }
        } catch (e) {
          if (!(e instanceof StepFailed)) opts.log.warn({ err: e, line: step.line }, 'lab step failed');
          const detail = (e as Error).message;
          run.steps.push({ line: step.line, step: what, ok: false, detail });
          trace.write({ kind: 'step', line: step.line, step: what, ok: false, detail });
        }
      }
      await run.census();
    },
    finish() {
      const failedSteps = run.steps.filter((st) => !st.ok).length;
      const passed = run.assertions.filter((a) => a.ok).length;
      const failed = run.assertions.length - passed + failedSteps;
      const simulatedMs = lab.clock.now().getTime() - scenario.start.getTime();
      const wallMs = Math.round(performance.now() - wall0);
      trace.write({ kind: 'run.end', passed, failed, simulatedMs, wallMs });
      return { scenario: scenario.name, passed, failed, steps: run.steps, assertions: run.assertions, simulatedMs, wallMs, records: trace.records };
    },
    close,
  };
}

/** Runs a scenario from start to end; the lab is closed whatever happens. */
export async function runScenario(scenario: Scenario, opts: RunOptions): Promise<RunResult> {
  const started = await startScenario(scenario, opts);
  try {
    await started.play();
    return started.finish();
  } finally {
    await started.close();
  }
}
