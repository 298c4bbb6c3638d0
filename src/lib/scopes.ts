/**
 * OAuth scopes as Mastodon defines them: top-level scopes and their granular children.
 * A token's scopes satisfy a required scope when they hold it, or a scope that implies it
 * (`read` → `read:statuses`, `admin:write` → `admin:write:accounts`, `follow` → the follow,
 * block and mute scopes it was split into).
 */
export const TOP_LEVEL_SCOPES = ['read', 'write', 'follow', 'push', 'profile', 'admin:read', 'admin:write'] as const;

export const GRANULAR_SCOPES = [
  'read:accounts', 'read:blocks', 'read:bookmarks', 'read:favourites', 'read:filters', 'read:follows',
  'read:lists', 'read:mutes', 'read:notifications', 'read:search', 'read:statuses',
  'write:accounts', 'write:blocks', 'write:bookmarks', 'write:conversations', 'write:favourites',
  'write:filters', 'write:follows', 'write:lists', 'write:media', 'write:mutes', 'write:notifications',
  'write:reports', 'write:statuses',
  'admin:read:accounts', 'admin:read:reports', 'admin:read:domain_allows', 'admin:read:domain_blocks',
  'admin:read:ip_blocks', 'admin:read:email_domain_blocks', 'admin:read:canonical_email_blocks',
  'admin:write:accounts', 'admin:write:reports', 'admin:write:domain_allows', 'admin:write:domain_blocks',
  'admin:write:ip_blocks', 'admin:write:email_domain_blocks', 'admin:write:canonical_email_blocks',
] as const;

export const ALL_SCOPES: ReadonlySet<string> = new Set<string>([...TOP_LEVEL_SCOPES, ...GRANULAR_SCOPES]);

const FOLLOW_IMPLIES = new Set(['read:follows', 'write:follows', 'read:blocks', 'write:blocks', 'read:mutes', 'write:mutes']);

/** Splits a space- (or plus-, as some clients send) separated scope string. */
export function parseScopes(value: string | null | undefined): string[] {
  if (!value) return [];
  return [...new Set(value.split(/[\s+]+/).filter(Boolean))];
}

export function unknownScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !ALL_SCOPES.has(s));
}

/** Whether `held` satisfies `required`. */
export function scopeSatisfied(held: readonly string[], required: string): boolean {
  for (const s of held) {
    if (s === required) return true;
    if (required.startsWith(`${s}:`) && (s === 'read' || s === 'write' || s === 'admin:read' || s === 'admin:write')) return true;
    if (s === 'follow' && FOLLOW_IMPLIES.has(required)) return true;
  }
  return false;
}

/** Whether `held` satisfies any one of `required` (Mastodon lists alternatives per endpoint). */
export function anyScopeSatisfied(held: readonly string[], required: readonly string[]): boolean {
  return required.length === 0 || required.some((r) => scopeSatisfied(held, r));
}

/** Whether every scope in `requested` is within `allowed` (an app's registered scopes). */
export function scopesWithin(requested: readonly string[], allowed: readonly string[]): boolean {
  return requested.every((r) => scopeSatisfied(allowed, r));
}
