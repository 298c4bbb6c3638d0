/**
 * Who may see or hear whom: mutes, blocks, domain blocks and thread mutes as SQL fragments, the one
 * place these rules are written. Timelines, notifications, conversations, relationships, follows
 * and the streaming hub build their statements from these (each fragment goes inside the caller's
 * own statement: no statement of its own).
 *
 * Every builder takes SQL expressions in the caller's terms (a column such as `i.account_id`, a
 * parameter such as `$1::bigint`) and returns a boolean SQL expression, except
 * {@link accountsHidingSql}, which is a SELECT of account ids. Inside, each uses its own table
 * aliases (`am`, `ab`, `ad`, `ada`, `atm`), so an argument must not name those aliases (it would
 * read the builder's row instead of the caller's): the builders refuse such an argument.
 *
 * The rules, as Mastodon has them:
 *   - a mute is in force until its `expires_at`, when it has one; it may leave notifications on
 *     (`hide_notifications` false), so notifications ask for the mutes that hide them;
 *   - a user's domain block names the domain in lower case; the author's domain is compared
 *     lower-cased (a local account has no domain and is never domain-blocked);
 *   - a thread mute (`conversation_mutes`) silences the notifications of one conversation.
 */

const ALIASES = ['am', 'ab', 'ad', 'ada', 'atm'] as const;
const ALIAS_RE = new RegExp(`\\b(${ALIASES.join('|')})\\.`);

/** Refuses an argument that names one of the builders' own aliases. */
function own(...exprs: string[]): void {
  for (const e of exprs) {
    if (ALIAS_RE.test(e)) throw new Error(`audience SQL: the expression ${JSON.stringify(e)} names an alias the builder uses (${ALIASES.join(', ')})`);
  }
}

/** SQL: the mute row `m` (an alias of `mutes`) is in force at `now` (no end, or an end still ahead). */
export function muteInForceSql(m: string, now: string): string {
  return `(${m}.expires_at is null or ${m}.expires_at > ${now})`;
}

/**
 * SQL: `viewer` mutes `account`, the mute in force at `now`; with `notifications`, only a mute
 * that also hides the account's notifications.
 */
export function mutedBySql(viewer: string, account: string, now: string, opts: { notifications?: boolean } = {}): string {
  own(viewer, account, now);
  return `exists (select 1 from mutes am where am.account_id = ${viewer} and am.target_account_id = ${account}${
    opts.notifications ? ' and am.hide_notifications' : ''
  } and ${muteInForceSql('am', now)})`;
}

/** SQL: `blocker` blocks `account`. */
export function blocksSql(blocker: string, account: string): string {
  own(blocker, account);
  return `exists (select 1 from blocks ab where ab.account_id = ${blocker} and ab.target_account_id = ${account})`;
}

/** SQL: `a` blocks `b` or `b` blocks `a`. */
export function blockedEitherWaySql(a: string, b: string): string {
  own(a, b);
  return `exists (select 1 from blocks ab where (ab.account_id = ${a} and ab.target_account_id = ${b}) or (ab.account_id = ${b} and ab.target_account_id = ${a}))`;
}

/**
 * SQL, a SELECT of one bigint column: the accounts hidden from `viewer` at `now` by a block
 * either way or a mute in force. For an account `x`, `x in (…)` holds exactly when
 * {@link hiddenFromSql} does, the domain block aside (add {@link domainBlockedBySql} on the
 * account's domain). For a statement over many rows (search): PostgreSQL builds the set once and
 * hashes it, instead of probing three tables for every row.
 */
export function accountsHiddenFromSql(viewer: string, now: string): string {
  own(viewer, now);
  return `select ab.target_account_id from blocks ab where ab.account_id = ${viewer}
    union all select ab.account_id from blocks ab where ab.target_account_id = ${viewer}
    union all select am.target_account_id from mutes am where am.account_id = ${viewer} and ${muteInForceSql('am', now)}`;
}

/** SQL: `viewer` blocks the domain `domain` (a text expression in any case; null is never blocked). */
export function domainBlockedBySql(viewer: string, domain: string): string {
  own(viewer, domain);
  return `exists (select 1 from account_domain_blocks ad where ad.account_id = ${viewer} and ad.domain = lower(${domain}))`;
}

/** SQL: `viewer` blocks the domain of the account `account` (never a local account). */
export function accountDomainBlockedBySql(viewer: string, account: string): string {
  own(viewer, account);
  return `exists (select 1 from accounts ada join account_domain_blocks ad on ad.domain = lower(ada.domain)
                   where ada.id = ${account} and ad.account_id = ${viewer})`;
}

/**
 * SQL: what `author` does is hidden from `viewer` at `now`: either blocks the other, `viewer`
 * mutes `author`, or `viewer` blocks `author`'s domain. With `notifications` (Mastodon's
 * notification filter): only `viewer`'s own block counts, and only a mute that hides
 * notifications.
 */
export function hiddenFromSql(viewer: string, author: string, now: string, opts: { notifications?: boolean } = {}): string {
  const block = opts.notifications ? blocksSql(viewer, author) : blockedEitherWaySql(viewer, author);
  return `(${block}
    or ${mutedBySql(viewer, author, now, opts)}
    or ${accountDomainBlockedBySql(viewer, author)})`;
}

/** SQL: `account` muted the thread `conversation` (a conversation id expression; null: no thread, false). */
export function threadMutedBySql(account: string, conversation: string): string {
  own(account, conversation);
  return `exists (select 1 from conversation_mutes atm where atm.account_id = ${account} and atm.conversation_id = ${conversation})`;
}

/**
 * SQL, a SELECT of one bigint column: the accounts from which a status by `author` (of the domain
 * `authorDomain`, a text expression, null when local) is hidden, asked by target rather than by
 * viewer. `targets` is a bigint[] expression holding the author and the accounts the status
 * mentions: whoever blocks or mutes (in force at `now`) one of them, whom the author blocks, and
 * whoever blocks the author's domain. For the author alone it is exactly the accounts for which
 * {@link hiddenFromSql} holds (the author itself may be among them: callers leave it out).
 */
export function accountsHidingSql(targets: string, author: string, authorDomain: string, now: string): string {
  own(targets, author, authorDomain, now);
  return `select ab.account_id from blocks ab where ab.target_account_id = any(${targets})
    union select ab.target_account_id from blocks ab where ab.account_id = ${author}
    union select am.account_id from mutes am where am.target_account_id = any(${targets}) and ${muteInForceSql('am', now)}
    union select ad.account_id from account_domain_blocks ad where ${authorDomain} is not null and ad.domain = lower(${authorDomain})`;
}
