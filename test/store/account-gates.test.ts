/**
 * Approval and confirmation are steps of the account actor, through the real server: a sign-up
 * made in approval mode is pending and hidden from other servers; the operator's
 * `accounts.modify --approve` steps the actor (origin operator), which writes users.approved and
 * an `account.approved` event, and the account becomes visible. A snapshot stored by the previous
 * account definition (no approval region) is migrated from the users row and steps the same way.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';
import { runCommand } from '../../src/control/commands.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost({ registrations: { mode: 'approval' } });
});
afterAll(async () => {
  await roost?.close();
});

interface EventRow {
  actor_kind: string;
  actor_id: string;
  actor_version: number | null;
  origin: string;
  type: string;
  payload: string;
}
const eventsOf = async (accountId: string) =>
  (
    await roost.services.db.sql.query<EventRow>(
      `select actor_kind, actor_id::text, actor_version, origin, type, payload::text as payload from outbox_events
        where actor_kind = 'account' and actor_id = $1 order by id`,
      [accountId],
    )
  ).map((r) => [r.actor_kind, r.actor_id, r.actor_version, r.origin, r.type, JSON.parse(r.payload)]);

const userRow = async (accountId: string) =>
  (
    await roost.services.db.sql.query<{ approved: boolean; confirmed_at: Date | string | null; machine: any; machine_version: number }>(
      `select u.approved, u.confirmed_at, a.machine, a.machine_version from users u join accounts a on a.id = u.account_id where a.id = $1`,
      [accountId],
    )
  )[0]!;
const machineOf = (row: { machine: any }) => (typeof row.machine === 'string' ? JSON.parse(row.machine) : row.machine);
const webfinger = (username: string) => fetch(roost.at(`/.well-known/webfinger?resource=acct:${username}@${roost.config.domain}`));
const modify = (args: Record<string, unknown>) => runCommand(roost.services, 'accounts.modify', args, { federation: roost.federation });

async function signUp(username: string): Promise<string> {
  const app = await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'signup', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } });
  const grant = await apiRequest(roost, '/oauth/token', {
    body: { grant_type: 'client_credentials', client_id: app.body.client_id, client_secret: app.body.client_secret, scope: 'write' },
  });
  const res = await apiRequest(roost, '/api/v1/accounts', {
    token: grant.body.access_token,
    body: { username, email: `${username}@example.test`, password: 'long enough pw', agreement: true, locale: 'en', reason: 'hello' },
  });
  expect(res.status).toBe(200);
  const [row] = await roost.services.db.sql.query<{ id: string }>(`select id::text from accounts where username = $1 and domain is null`, [username]);
  return row!.id;
}

describe('approving and confirming a sign-up through the account actor', () => {
  it('a pending sign-up is born pending and unconfirmed; --approve steps the actor, writes the user and shows the account', async () => {
    const id = await signUp('gate_pia');
    const before = await userRow(id);
    expect(before.approved).toBe(false);
    expect(before.confirmed_at).toBeNull();
    expect(machineOf(before)).toMatchObject({ definition: 3, version: 0, value: { existing: { approval: 'pending', confirmation: 'unconfirmed' } } });
    expect((await webfinger('gate_pia')).status).toBe(404);
    expect(await eventsOf(id)).toEqual([]);

    expect(await modify({ username: 'gate_pia', approve: true })).toEqual({ username: 'gate_pia', changes: ['approved'] });
    const approved = await userRow(id);
    expect(approved.approved).toBe(true);
    expect(approved.confirmed_at).toBeNull();
    expect(approved.machine_version).toBe(1);
    expect(machineOf(approved)).toMatchObject({ definition: 3, version: 1, value: { existing: { approval: 'approved', confirmation: 'unconfirmed' } } });
    expect(await eventsOf(id)).toEqual([['account', id, 1, 'operator', 'account.approved', { type: 'account.approved', accountId: id }]]);
    // An API sign-up also waits for its e-mail confirmation before it federates.
    expect((await webfinger('gate_pia')).status).toBe(404);

    // Approving again: reported as before, but the actor refuses it: no write, no event.
    expect(await modify({ username: 'gate_pia', approve: true })).toEqual({ username: 'gate_pia', changes: ['approved'] });
    expect((await userRow(id)).machine_version).toBe(1);

    expect(await modify({ username: 'gate_pia', confirm: true })).toEqual({ username: 'gate_pia', changes: ['confirmed'] });
    const confirmed = await userRow(id);
    expect(confirmed.confirmed_at).not.toBeNull();
    expect(machineOf(confirmed).value.existing).toMatchObject({ approval: 'approved', confirmation: 'confirmed' });
    expect((await eventsOf(id)).map((e) => [e[2], e[3], e[4]])).toEqual([
      [1, 'operator', 'account.approved'],
      [2, 'operator', 'account.confirmed'],
    ]);
    const res = await webfinger('gate_pia');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { subject: string }).subject).toBe(`acct:gate_pia@${roost.config.domain}`);

    // Confirming again keeps the first confirmation time and writes nothing.
    await modify({ username: 'gate_pia', confirm: true });
    const again = await userRow(id);
    expect(new Date(again.confirmed_at!).getTime()).toBe(new Date(confirmed.confirmed_at!).getTime());
    expect(again.machine_version).toBe(2);
  });

  it('approves, confirms and disables in one command: three operator events, in order', async () => {
    const id = await signUp('gate_quin');
    expect(await modify({ username: 'gate_quin', approve: true, confirm: true, disable: true })).toEqual({
      username: 'gate_quin',
      changes: ['approved', 'confirmed', 'disabled'],
    });
    expect((await eventsOf(id)).map((e) => [e[2], e[3], e[4]])).toEqual([
      [1, 'operator', 'account.approved'],
      [2, 'operator', 'account.confirmed'],
      [3, 'operator', 'account.disabled'],
    ]);
    const [u] = await roost.services.db.sql.query<{ approved: boolean; confirmed: boolean; disabled: boolean }>(
      `select approved, confirmed_at is not null as confirmed, disabled from users where account_id = $1`,
      [id],
    );
    expect(u).toEqual({ approved: true, confirmed: true, disabled: true });
  });

  it('a snapshot written by the previous account definition is migrated from the users row, then approved', async () => {
    const rex = await createTestUser(roost, 'gate_rex', { approved: false });
    // The shape definition 1 stored: five regions, no approval or confirmation, at version 3.
    const v1 = {
      value: { existing: { locking: 'locked', login: 'enabled', migration: 'unmoved', silencing: 'unsilenced', suspension: 'unsuspended' } },
      context: { accountId: rex.account.id, movedToAccountId: null },
      version: 3,
      definition: 1,
    };
    await roost.services.db.sql.query(`update accounts set machine = $2::jsonb, machine_version = 3, locked = true where id = $1`, [
      rex.account.id,
      JSON.stringify(v1),
    ]);
    expect((await webfinger('gate_rex')).status).toBe(404);
    await modify({ username: 'gate_rex', approve: true });
    const row = await userRow(rex.account.id);
    expect(row.approved).toBe(true);
    expect(row.machine_version).toBe(4);
    expect(machineOf(row)).toEqual({
      definition: 3,
      version: 4,
      context: { accountId: rex.account.id, movedToAccountId: null },
      value: {
        existing: {
          approval: 'approved', confirmation: 'confirmed', locking: 'locked', login: 'enabled',
          migration: 'unmoved', silencing: 'unsilenced', suspension: 'unsuspended', sensitizing: 'unsensitized',
        },
      },
    });
    expect(await eventsOf(rex.account.id)).toEqual([
      ['account', rex.account.id, 4, 'operator', 'account.approved', { type: 'account.approved', accountId: rex.account.id }],
    ]);
    expect((await webfinger('gate_rex')).status).toBe(200);
  });
});
