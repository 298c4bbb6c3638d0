/**
 * The routes of Roost's mail flows: POST /api/v1/emails/confirmations (resend the confirmation,
 * optionally to a new address) and GET /api/v1/emails/check_confirmation; the confirmation link
 * (GET /auth/confirmation?confirmation_token=…); the password web flow as Mastodon's (Devise's):
 * /auth/password/new (the form that sends the reset mail), POST /auth/password, and
 * /auth/password/edit?reset_password_token=… (the form that sets the new password). Minimal HTML,
 * the OAuth page's style.
 */
import type { Router } from '../http/index.ts';
import { json, paramString, stringResponse } from '../http/index.ts';
import type { Services } from '../context.ts';
import { requireToken, requireUser } from './auth.ts';
import { RoostError } from '../lib/errors.ts';
import { escapeHtml } from '../lib/html.ts';
import { layout } from './oauth-page.ts';
import { confirmEmail, emailConfirmed, passwordResetUser, requestPasswordReset, resendConfirmation, resetPassword } from '../services/mail-flows.ts';

const WRITE_ACCOUNTS = ['write', 'write:accounts'];
const READ_ACCOUNTS = ['read', 'read:accounts'];

const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};
const page = (title: string, body: string, status = 200) => stringResponse(layout(title, `<h1>${escapeHtml(title)}</h1>${body}`), { status, headers: HEADERS });
const message = (text: string, cls = 'notice') => `<p class="${cls}" id="${cls}">${escapeHtml(text)}</p>`;

function newPasswordForm(token: string, error?: string): string {
  return `${error ? message(error, 'error') : ''}<form method="post" action="/auth/password/edit">
<input type="hidden" name="reset_password_token" value="${escapeHtml(token)}">
<label for="password">New password</label><input type="password" id="password" name="password" autocomplete="new-password" required minlength="8" maxlength="72">
<label for="password_confirmation">Confirm new password</label><input type="password" id="password_confirmation" name="password_confirmation" autocomplete="new-password" required>
<div class="buttons"><button type="submit" id="submit">Set my new password</button></div></form>`;
}

const INVALID_RESET = 'This password reset link is invalid or has expired. Ask for a new one at /auth/password/new.';

export function mailFlowRoutes(router: Router, services: Services): void {
  router.post('/api/v1/emails/confirmations', async (ctx) => {
    const viewer = await requireToken(services, ctx, WRITE_ACCOUNTS);
    if (!viewer.user) throw new RoostError(403, 'This method is only available to the application the user originally signed-up with');
    const email = ctx.input.email === undefined || ctx.input.email === null ? undefined : (paramString(ctx.input.email) ?? '');
    await resendConfirmation(services, { userId: viewer.user.id, tokenApplicationId: viewer.token.applicationId ?? null, ip: ctx.remoteAddress }, email);
    return json({});
  });

  router.get('/api/v1/emails/check_confirmation', async (ctx) => {
    const viewer = await requireUser(services, ctx, READ_ACCOUNTS, { allowUnconfirmed: true });
    return json(await emailConfirmed(services, viewer.user.id));
  });

  router.get('/auth/confirmation', async (ctx) => {
    const ok = await confirmEmail(services, paramString(ctx.query.confirmation_token) ?? '');
    if (!ok) return page('E-mail confirmation', message('This confirmation link is invalid or has expired.', 'error'), 404);
    return page('E-mail confirmation', message('Your e-mail address has been confirmed. You can now sign in from your app.'));
  });

  router.get('/auth/password/new', () =>
    page(
      'Forgot your password?',
      `<form method="post" action="/auth/password">
<label for="email">E-mail address</label><input type="text" id="email" name="email" autocomplete="email" required>
<div class="buttons"><button type="submit" id="submit">Send me instructions</button></div></form>`,
    ),
  );

  router.post('/auth/password', async (ctx) => {
    await requestPasswordReset(services, paramString(ctx.body.email) ?? '', ctx.remoteAddress);
    return page(
      'Forgot your password?',
      message('If your e-mail address exists in our database, you will receive a password recovery link at your e-mail address in a few minutes.'),
    );
  });

  router.get('/auth/password/edit', async (ctx) => {
    const token = paramString(ctx.query.reset_password_token) ?? '';
    if (!(await passwordResetUser(services, token))) return page('Change your password', message(INVALID_RESET, 'error'), 404);
    return page('Change your password', newPasswordForm(token));
  });

  router.post('/auth/password/edit', async (ctx) => {
    const token = paramString(ctx.body.reset_password_token) ?? '';
    try {
      const done = await resetPassword(services, token, paramString(ctx.body.password) ?? '', paramString(ctx.body.password_confirmation) ?? '');
      if (!done) return page('Change your password', message(INVALID_RESET, 'error'), 404);
    } catch (e) {
      if (e instanceof RoostError && e.status === 422) return page('Change your password', newPasswordForm(token, e.message), 422);
      throw e;
    }
    return page('Change your password', message('Your password has been changed. Sign in again from your apps.'));
  });
}
