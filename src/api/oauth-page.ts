/** The HTML of the sign-in and consent page, and of the page that shows an out-of-band code. */
import { escapeHtml } from '../lib/html.ts';

const SCOPE_WORDS: Record<string, string> = {
  read: 'read all your account data',
  write: 'modify all your account data',
  follow: 'modify account relationships',
  push: 'receive your push notifications',
  profile: 'read only your account information',
  'admin:read': 'read all data on the server',
  'admin:write': 'modify all data on the server',
};

function scopeWords(scope: string): string {
  if (SCOPE_WORDS[scope]) return SCOPE_WORDS[scope];
  const [mode, ...rest] = scope.split(':');
  const what = rest.join(' ').replace(/_/g, ' ');
  return `${mode === 'read' || mode === 'admin' && rest[0] === 'read' ? 'read' : 'modify'} ${what}`;
}

/**
 * Text that can turn the direction of what follows it: the explicit bidi controls (embeddings,
 * overrides, isolates, marks) and right-to-left scripts.
 */
const DIRECTIONAL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}]/u;

/**
 * An app's name (chosen by whoever registered the app) inside our sentence, escaped, and isolated
 * when it carries direction: a U+202E RIGHT-TO-LEFT OVERRIDE in a name must not reverse "would
 * like permission to access your account". <bdi> in the page (the page's CSS isolates <strong>
 * and <a> too), U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE in plain text (the
 * title); a PDI also closes any embedding or override left open inside.
 */
function nameHtml(name: string): string {
  return DIRECTIONAL.test(name) ? `<bdi>${escapeHtml(name)}</bdi>` : escapeHtml(name);
}
function nameText(name: string): string {
  return DIRECTIONAL.test(name) ? `\u2068${name}\u2069` : name;
}

export function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222} strong,a,bdi{unicode-bidi:isolate}
h1{font-size:1.4rem} label{display:block;margin:.8rem 0 .2rem} input[type=text],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
.buttons{margin-top:1.2rem;display:flex;gap:.6rem} button{padding:.55rem 1.2rem;font-size:1rem}
.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.6rem;border-radius:4px} code{font-size:1.1rem;word-break:break-all}
</style></head><body>${body}</body></html>`;
}

export interface AuthorizePageInput {
  appName: string;
  appWebsite: string | null;
  instanceTitle: string;
  scopes: string[];
  hidden: Record<string, string>;
  login?: string;
  error?: string;
}

export function authorizePage(p: AuthorizePageInput): string {
  const hidden = Object.entries(p.hidden)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  const app = p.appWebsite
    ? `<a href="${escapeHtml(p.appWebsite)}" rel="noopener noreferrer">${nameHtml(p.appName)}</a>`
    : `<strong>${nameHtml(p.appName)}</strong>`;
  return layout(
    `Authorize ${nameText(p.appName)}`,
    `<h1>Sign in to ${escapeHtml(p.instanceTitle)}</h1>
<p>${app} would like permission to access your account. It will be able to:</p>
<ul id="scopes">${p.scopes.map((s) => `<li data-scope="${escapeHtml(s)}">${escapeHtml(scopeWords(s))} <small>(${escapeHtml(s)})</small></li>`).join('')}</ul>
${p.error ? `<p class="error" id="error">${escapeHtml(p.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">${hidden}
<label for="login">Username or e-mail address</label><input type="text" id="login" name="login" autocomplete="username" required value="${escapeHtml(p.login ?? '')}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="buttons"><button type="submit" name="decision" value="authorize" id="authorize">Authorize</button>
<button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button></div>
</form>`,
  );
}

export function errorPage(message: string): string {
  return layout('Authorization error', `<h1>Authorization error</h1><p class="error" id="error">${escapeHtml(message)}</p>`);
}

export function codePage(code: string, appName: string): string {
  return layout(
    'Authorization code',
    `<h1>Authorization code</h1><p>Copy this code and paste it into ${nameHtml(appName)}.</p><p><code id="authorization-code">${escapeHtml(code)}</code></p>`,
  );
}
