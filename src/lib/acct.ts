/**
 * A handle as people type it — `user`, `@user`, `user@domain`, `@user@domain` — split into its
 * username and domain; the domain is null for no domain or this server's own. Null when the text
 * is not a handle.
 */
export function parseAcct(acct: string, localDomain: string): { username: string; domain: string | null } | null {
  const m = /^([^@\s/]+)(?:@([^@\s/]+))?$/.exec(acct.trim().replace(/^@/, ''));
  if (!m) return null;
  const domain = m[2] && m[2].toLowerCase() !== localDomain.toLowerCase() ? m[2] : null;
  return { username: m[1]!, domain };
}
