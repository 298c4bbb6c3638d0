/**
 * Quote policies (Mastodon 4.5): who may quote a status and have the quote accepted at once.
 * Mastodon lets its users choose among three (`public`, `followers`, `nobody`); a private or
 * direct status is always `nobody`; the author may always quote their own posts (not a direct
 * one). Pure: shared by the writer (services/quotes.ts), the rendering (serializers/status.ts
 * `quote_approval`) and the answer to a remote QuoteRequest.
 */

export const QUOTE_POLICIES = ['public', 'followers', 'nobody'] as const;
export type QuotePolicy = (typeof QUOTE_POLICIES)[number];

export function isQuotePolicy(v: unknown): v is QuotePolicy {
  return typeof v === 'string' && (QUOTE_POLICIES as readonly string[]).includes(v);
}

/** The policy a status is stored with: the one asked for, nobody for private and direct ones (Mastodon ignores the parameter there). */
export function effectivePolicy(asked: QuotePolicy, visibility: string): QuotePolicy {
  return visibility === 'public' || visibility === 'unlisted' ? asked : 'nobody';
}

export interface QuoteContext {
  /** The stored policy (null: a remote status whose server stated none, so nobody). */
  policy: string | null;
  visibility: string;
  /** The one who would quote is the author. */
  own: boolean;
  /** The one who would quote follows the author (accepted). */
  follows: boolean;
  /** Somebody is asking (false: signed out). */
  known: boolean;
}

/**
 * How the policy applies to one account (Mastodon's QuoteApproval#current_user): `automatic` or
 * `denied` (Mastodon offers its users no manual review, and neither does Roost).
 */
export function quoteDecision(c: QuoteContext): 'automatic' | 'denied' {
  if (!c.known || c.visibility === 'direct' || c.visibility === 'limited') return 'denied';
  if (c.own) return 'automatic';
  if (c.visibility === 'private') return 'denied';
  if (c.policy === 'public') return 'automatic';
  if (c.policy === 'followers' && c.follows) return 'automatic';
  return 'denied';
}

/** Mastodon's QuoteApproval `automatic` list for a stored policy. */
export function automaticApproval(policy: string | null, visibility: string): string[] {
  if (visibility !== 'public' && visibility !== 'unlisted') return [];
  return policy === 'public' ? ['public'] : policy === 'followers' ? ['followers'] : [];
}
