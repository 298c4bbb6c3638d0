/**
 * Roost's mail through a real SMTP conversation with a sink on loopback (test/helpers/smtp-sink.ts):
 * the confirmation mail of an API sign-up and its link, the resend (to a changed address) with
 * Mastodon's refusals, the password-reset web flow (which revokes the user's tokens), the warning
 * of a moderation action, one mail per fact under a retried job, and no mail without SMTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settled, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts';
import { recordEvent } from '../../src/services/actor-store.ts';
import { sqlFromEm } from '../../src/db/sql.ts';
import { mailConsumer } from '../../src/effects/mail.ts';

let sink: SmtpSink;
let roost: TestRoost;
let appToken: string;
let otherAppToken: string;

async function appAndToken(r: TestRoost): Promise<string> {
  const app = (await apiRequest(r, '/api/v1/apps', { body: { client_name: 'Mail', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read write' } })).body;
  return (
    await apiRequest(r, '/oauth/token', { body: { grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret, scope: 'read write' } })
  ).body.access_token as string;
}

async function signUp(r: TestRoost, token: string, username: string, email = `${username}@example.test`): Promise<string> {
  const res = await apiRequest(r, '/api/v1/accounts', { token, body: { username, email, password: 'long enough pw', agreement: true, locale: 'en' } });
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

/** The link in a mail's text that starts with `prefix`. */
function linkIn(text: string, prefix: string): string {
  const m = new RegExp(`${prefix.replace(/[.?/]/g, '\\$&')}\\S+`).exec(text);
  if (!m) throw new Error(`no link ${prefix} in:\n${text}`);
  return m[0];
}

/** A form POST as a browser sends it; the HTML answer. */
async function postForm(url: string, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
  return { status: res.status, text: await res.text() };
}

beforeAll(async () => {
  sink = await startSmtpSink();
  roost = await startTestRoost({ mail: { smtpHost: '127.0.0.1', smtpPort: sink.port, smtpSecurity: 'none', from: 'Roost <notifications@roost.test>' } });
  appToken = await appAndToken(roost);
  otherAppToken = await appAndToken(roost);
});
afterAll(async () => {
  await roost?.close();
  await sink?.close();
});

describe('the confirmation mail', () => {
  it('goes out on an API sign-up, and its link confirms the user through the account actor', async () => {
    const userToken = await signUp(roost, appToken, 'carla');
    const mail = await sink.waitFor('carla@example.test');
    expect(mail.from).toBe('notifications@roost.test');
    expect(mail.subject).toBe(`Roost: Confirmation instructions for ${roost.config.domain}`);
    expect(mail.raw).toMatch(/^From: Roost <notifications@roost\.test>/m);
    const link = linkIn(mail.text, `${roost.config.publicUrl}/auth/confirmation?confirmation_token=`);

    // Unconfirmed: the API says so until the link is followed.
    expect((await apiRequest(roost, '/api/v1/accounts/relationships?id[]=1', { token: userToken })).body).toEqual({
      error: 'Your login is missing a confirmed e-mail address',
    });
    expect((await apiRequest(roost, '/api/v1/emails/check_confirmation', { token: userToken })).body).toBe(false);

    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('Your e-mail address has been confirmed.');
    expect((await apiRequest(roost, '/api/v1/emails/check_confirmation', { token: userToken })).body).toBe(true);
    expect((await apiRequest(roost, '/api/v1/accounts/relationships?id[]=1', { token: userToken })).status).toBe(200);

    // The account actor took the step: its fact is in the outbox, the row says confirmed.
    const [row] = await roost.services.db.sql.query<{ confirmed: boolean; token: string | null; facts: number }>(
      `select u.confirmed_at is not null as confirmed, u.confirmation_token_hash as token,
              (select count(*)::int from outbox_events e where e.type = 'account.confirmed' and e.actor_id = u.account_id) as facts
         from users u where u.email = 'carla@example.test'`,
    );
    expect(row).toEqual({ confirmed: true, token: null, facts: 1 });

    // A spent link, or a made-up one, confirms nothing.
    const again = await fetch(link);
    expect(again.status).toBe(404);
    expect(await again.text()).toContain('This confirmation link is invalid or has expired.');
    expect((await fetch(roost.at('/auth/confirmation?confirmation_token=nope'))).status).toBe(404);
    expect((await fetch(roost.at('/auth/confirmation'))).status).toBe(404);
  });

  it('is sent again on POST /api/v1/emails/confirmations, to a changed address, and only the newest link works', async () => {
    const userToken = await signUp(roost, appToken, 'dmitri');
    const first = await sink.waitFor('dmitri@example.test');
    const firstLink = linkIn(first.text, `${roost.config.publicUrl}/auth/confirmation?confirmation_token=`);

    // Another app's token for the user: Mastodon's refusal.
    const viaOther = await apiRequest(roost, '/api/v1/emails/confirmations', { token: otherAppToken, method: 'POST' });
    expect(viaOther.status).toBe(403);
    expect(viaOther.body).toEqual({ error: 'This method is only available to the application the user originally signed-up with' });

    // A malformed or taken new address: 422 with details, nothing changed, no mail.
    const bad = await apiRequest(roost, '/api/v1/emails/confirmations', { token: userToken, body: { email: 'not an address' } });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ error: 'Validation failed: Email is invalid', details: { email: [{ error: 'ERR_INVALID', description: 'is invalid' }] } });
    const taken = await apiRequest(roost, '/api/v1/emails/confirmations', { token: userToken, body: { email: 'CARLA@example.test' } });
    expect(taken.status).toBe(422);
    expect(taken.body.details).toEqual({ email: [{ error: 'ERR_TAKEN', description: 'is already taken' }] });

    const resent = await apiRequest(roost, '/api/v1/emails/confirmations', { token: userToken, body: { email: 'dima@example.test' } });
    expect(resent.status).toBe(200);
    expect(resent.body).toEqual({});
    const second = await sink.waitFor('dima@example.test');
    expect(second.text).toContain('dima@example.test');
    const secondLink = linkIn(second.text, `${roost.config.publicUrl}/auth/confirmation?confirmation_token=`);
    expect(secondLink).not.toBe(firstLink);
    expect((await fetch(firstLink)).status).toBe(404);
    expect((await fetch(secondLink)).status).toBe(200);

    // Confirmed: Mastodon's other refusal.
    const late = await apiRequest(roost, '/api/v1/emails/confirmations', { token: userToken, method: 'POST' });
    expect(late.status).toBe(403);
    expect(late.body).toEqual({ error: 'This method is only available while the e-mail is awaiting confirmation' });
    expect(sink.to('dmitri@example.test')).toHaveLength(1);
    expect(sink.to('dima@example.test')).toHaveLength(1);
  });

  it('is not sent for an account created confirmed (the CLI), and a user token of no app cannot resend', async () => {
    const op = await createTestUser(roost, 'operator_made', { scopes: ['read', 'write'] });
    await settled(roost);
    expect(sink.to('operator_made@example.test')).toHaveLength(0);
    const res = await op.api('/api/v1/emails/confirmations', { method: 'POST' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'This method is only available to the application the user originally signed-up with' });
  });

  it('goes once per fact: an SMTP server that refuses at first gets it on the retry, and a re-run job sends nothing twice', async () => {
    sink.failNext(1);
    await signUp(roost, appToken, 'erin');
    await sink.waitFor('erin@example.test', 1, 30_000);
    await settled(roost);
    expect(sink.to('erin@example.test')).toHaveLength(1);

    // The same fact again (a job re-run after a crash): mail_deliveries holds it back.
    const [fact] = await roost.services.db.sql.query<{ id: string; actor_id: string; event: { type: 'user.signed_up'; accountId: string; userId: string } }>(
      `select id::text, actor_id::text, payload as event from outbox_events where type = 'user.signed_up' and payload->>'accountId' =
         (select account_id::text from users where email = 'erin@example.test')`,
    );
    const sent: unknown[] = [];
    const rerun = mailConsumer(roost.services, async (m) => void sent.push(m));
    await rerun({ id: fact!.id, actorKind: 'user', actorId: fact!.actor_id, actorVersion: null, origin: 'client', event: fact!.event });
    expect(sent).toEqual([]);
    const [deliveries] = await roost.services.db.sql.query<{ n: number }>(`select count(*)::int as n from mail_deliveries where source_key = $1`, [
      `outbox:${fact!.id}/confirmation`,
    ]);
    expect(deliveries!.n).toBe(1);
  });
});

describe('the password reset', () => {
  it('sends a link from /auth/password/new; the link sets a new password and revokes the user’s tokens', async () => {
    const frank = await createTestUser(roost, 'frank', { password: 'old password 1' });
    const form = await fetch(roost.at('/auth/password/new'));
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('<form method="post" action="/auth/password">');

    const asked = await postForm(roost.at('/auth/password'), { email: 'FRANK@example.test' });
    expect(asked.status).toBe(200);
    expect(asked.text).toContain('If your e-mail address exists in our database');
    // An unknown address gets the same answer and no mail.
    expect((await postForm(roost.at('/auth/password'), { email: 'nobody@example.test' })).text).toContain('If your e-mail address exists in our database');

    const mail = await sink.waitFor('frank@example.test');
    expect(mail.subject).toBe('Roost: Reset password instructions');
    const link = linkIn(mail.text, `${roost.config.publicUrl}/auth/password/edit?reset_password_token=`);
    const token = new URL(link).searchParams.get('reset_password_token')!;
    const edit = await fetch(link);
    expect(edit.status).toBe(200);
    expect(await edit.text()).toContain('name="reset_password_token"');

    // Too short, or not confirmed alike: the form again with the reason, nothing changed.
    const short = await postForm(roost.at('/auth/password/edit'), { reset_password_token: token, password: 'short', password_confirmation: 'short' });
    expect(short.status).toBe(422);
    expect(short.text).toContain('Password is too short (minimum is 8 characters)');
    const mismatch = await postForm(roost.at('/auth/password/edit'), { reset_password_token: token, password: 'new password 2', password_confirmation: 'other password' });
    expect(mismatch.status).toBe(422);
    expect(mismatch.text).toContain('Password confirmation doesn&#39;t match Password');
    expect((await frank.api('/api/v1/accounts/verify_credentials')).status).toBe(200);

    const done = await postForm(roost.at('/auth/password/edit'), { reset_password_token: token, password: 'new password 2', password_confirmation: 'new password 2' });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Your password has been changed.');
    expect((await frank.api('/api/v1/accounts/verify_credentials')).status).toBe(401);
    // The link is spent.
    expect((await fetch(link)).status).toBe(404);
    expect((await postForm(roost.at('/auth/password/edit'), { reset_password_token: token, password: 'third password', password_confirmation: 'third password' })).status).toBe(404);

    // The new password signs in (the password grant); the old one does not.
    const app = (await apiRequest(roost, '/api/v1/apps', { body: { client_name: 'Pw', redirect_uris: 'urn:ietf:wg:oauth:2.0:oob', scopes: 'read' } })).body;
    const grant = (password: string) =>
      apiRequest(roost, '/oauth/token', { body: { grant_type: 'password', client_id: app.client_id, client_secret: app.client_secret, username: 'frank@example.test', password, scope: 'read' } });
    expect((await grant('old password 1')).status).toBe(400);
    expect((await grant('new password 2')).status).toBe(200);
  });

  it('refuses a link sent more than 6 hours ago', async () => {
    await createTestUser(roost, 'gina', { password: 'old password 1' });
    await postForm(roost.at('/auth/password'), { email: 'gina@example.test' });
    const mail = await sink.waitFor('gina@example.test');
    const link = linkIn(mail.text, `${roost.config.publicUrl}/auth/password/edit?reset_password_token=`);
    await roost.services.db.sql.query(`update users set reset_password_sent_at = reset_password_sent_at - interval '7 hours' where email = 'gina@example.test'`);
    expect((await fetch(link)).status).toBe(404);
  });
});

describe('the warning mail', () => {
  it('goes for account.warned with sendEmail, and not without', async () => {
    const hana = await createTestUser(roost, 'hana');
    const mod = await createTestUser(roost, 'moddy', { role: 'Moderator' });
    const warn = async (action: string, text: string, sendEmail: boolean) => {
      const id = roost.services.ids.next();
      await roost.services.db.em().transactional(async (tx) => {
        const sql = sqlFromEm(tx);
        await sql.query(
          `insert into account_warnings (id, account_id, target_account_id, action, text, created_at, updated_at) values ($1, $2, $3, $4, $5, now(), now())`,
          [id, mod.account.id, hana.account.id, action, text],
        );
        await recordEvent(roost.services, sql, {
          actorKind: 'account',
          actorId: hana.account.id,
          origin: 'client',
          event: { type: 'account.warned', accountId: hana.account.id, warningId: id, action, sendEmail },
        });
      });
    };
    await warn('none', 'no mail for this one', false);
    await warn('silence', 'Please stop posting spam.', true);
    const mail = await sink.waitFor('hana@example.test');
    expect(mail.subject).toBe(`Your account @hana@${roost.config.domain} has been limited`);
    expect(mail.text).toContain('Please stop posting spam.');
    await settled(roost);
    expect(sink.to('hana@example.test')).toHaveLength(1);
  });
});

describe('without SMTP', () => {
  it('sends nothing and leaves the sign-up unconfirmed (the operator confirms with the CLI)', async () => {
    const quiet = await startTestRoost();
    try {
      const token = await appAndToken(quiet);
      await signUp(quiet, token, 'ivan', 'ivan@example.test');
      await settled(quiet);
      expect(sink.to('ivan@example.test')).toHaveLength(0);
      const [row] = await quiet.services.db.sql.query<{ confirmed: boolean; n: number }>(
        `select (select confirmed_at is not null from users where email = 'ivan@example.test') as confirmed, (select count(*)::int from mail_deliveries) as n`,
      );
      expect(row).toEqual({ confirmed: false, n: 0 });
    } finally {
      await quiet.close();
    }
  });
});
