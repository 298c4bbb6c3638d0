/**
 * HTML of the public pages' parts, from the Mastodon JSON the views render (so a page shows what
 * the API shows an anonymous client): a profile's head, a status (its author, content warning,
 * content, media with their descriptions, poll results, counts), a page link. Pure: text is
 * escaped by the template; content and bios of remote accounts go through the one sanitiser
 * (lib/sanitize.ts) again here, local ones are Roost's own formatting.
 */
import { html, trustedHtml, type SafeHtml } from '../../lib/html-template.ts';
import { sanitizeRemoteHtml, plainText } from '../../lib/sanitize.ts';
import type { MastodonAccount } from '../../serializers/account.ts';
import type { MastodonStatus } from '../../serializers/status.ts';
import type { MastodonPoll } from '../../serializers/poll.ts';
import type { MastodonMediaAttachment } from '../../serializers/media-attachment.ts';

const isRemote = (account: MastodonAccount) => account.acct.includes('@');

/** An account's HTML (bio, field value, post) fit to insert: remote markup through the sanitiser. */
function markup(account: MastodonAccount, value: string): SafeHtml {
  return trustedHtml(isRemote(account) ? sanitizeRemoteHtml(value) : value);
}

export function displayName(account: MastodonAccount): string {
  return account.display_name.trim() || account.username;
}

/** `@user@domain` for every account (the local ones with this server's domain). */
export function fullHandle(account: MastodonAccount, localDomain: string): string {
  return `@${account.acct.includes('@') ? account.acct : `${account.acct}@${localDomain}`}`;
}

const dateFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

function when(iso: string): string {
  return `${dateFormat.format(new Date(iso))} UTC`;
}

export function profileHead(account: MastodonAccount, localDomain: string): SafeHtml {
  const name = displayName(account);
  const fields = account.fields.length
    ? html`<dl class="fields">${account.fields.map(
        (f) => html`<div><dt>${plainText(f.name, 255)}</dt><dd${f.verified_at ? html` class="verified"` : ''}>${markup(account, f.value)}${
          f.verified_at ? html` <span title="${`Ownership of this link was checked on ${when(f.verified_at)}`}">✓ verified</span>` : ''
        }</dd></div>`,
      )}</dl>`
    : '';
  const counts = html`<ul class="counts" aria-label="Counts">
<li><strong>${account.statuses_count}</strong> posts</li>
${account.hide_collections ? '' : html`<li><strong>${account.followers_count}</strong> followers</li><li><strong>${account.following_count}</strong> following</li>`}
</ul>`;
  return html`<article class="profile" aria-labelledby="profile-name">
<img class="banner" src="${account.header}" alt="" width="700" height="200">
<div class="who"><img src="${account.avatar}" alt="${`Avatar of ${name}`}" width="96" height="96">
<div><h1 id="profile-name">${name}</h1><p class="handle">${fullHandle(account, localDomain)}${account.bot ? ' · automated' : ''}${account.locked ? ' · approves followers' : ''}</p></div></div>
${account.moved ? html`<p class="moved"><strong>${name} has moved to <a href="${account.moved.url}">${fullHandle(account.moved, localDomain)}</a>.</strong></p>` : ''}
${account.note ? html`<div class="bio">${markup(account, account.note)}</div>` : ''}
${fields}
${counts}
</article>`;
}

function media(items: readonly MastodonMediaAttachment[], sensitive: boolean): SafeHtml | '' {
  if (items.length === 0) return '';
  const one = (m: MastodonMediaAttachment) => {
    const alt = m.description ?? '';
    const src = m.url ?? m.remote_url ?? '';
    const size = m.meta?.small ?? m.meta?.original;
    const dims = size && 'width' in size && size.width && size.height ? html` width="${size.width}" height="${size.height}"` : '';
    if (m.type === 'image' || m.type === 'unknown') {
      return html`<li><figure><a href="${src}"><img src="${m.preview_url ?? src}" alt="${alt}"${dims} loading="lazy"></a></figure></li>`;
    }
    if (m.type === 'audio') return html`<li><figure><audio controls preload="none" src="${src}" aria-label="${alt || 'Audio'}"></audio>${alt ? html`<figcaption>${alt}</figcaption>` : ''}</figure></li>`;
    // video and gifv
    return html`<li><figure><video controls preload="none" src="${src}" poster="${m.preview_url ?? ''}"${dims} aria-label="${alt || 'Video'}"${m.type === 'gifv' ? ' loop muted' : ''}></video>${alt ? html`<figcaption>${alt}</figcaption>` : ''}</figure></li>`;
  };
  const list = html`<ul class="media" aria-label="Attachments">${items.map(one)}</ul>`;
  return sensitive ? html`<details class="sensitive"><summary>Sensitive media (${items.length})</summary>${list}</details>` : list;
}

function poll(p: MastodonPoll): SafeHtml {
  const total = p.multiple ? (p.voters_count ?? p.votes_count) : p.votes_count;
  const shown = p.options.every((o) => o.votes_count !== null);
  const items = p.options.map((o) => {
    const pct = shown && p.votes_count > 0 ? Math.round(((o.votes_count ?? 0) * 100) / Math.max(1, p.multiple ? (total ?? 0) : p.votes_count)) : 0;
    return shown
      ? html`<li><span class="label"><span>${o.title}</span><span>${pct}%</span></span><progress max="100" value="${pct}" aria-label="${`${o.title}: ${pct}%`}">${pct}%</progress></li>`
      : html`<li><span class="label"><span>${o.title}</span></span></li>`;
  });
  const state = p.expired ? 'Closed' : p.expires_at ? `Ends ${when(p.expires_at)}` : 'Open';
  return html`<div class="poll"><ul aria-label="Poll results">${items}</ul><p class="meta">${total ?? 0} ${(total ?? 0) === 1 ? (p.multiple ? 'person' : 'vote') : p.multiple ? 'people' : 'votes'} · ${state}</p></div>`;
}

export interface StatusRenderOptions {
  localDomain: string;
  /** The page's own status (a heading-level title, full date). */
  focus?: boolean;
  headingLevel?: 2 | 3;
}

/** One status (a reblog: "X boosted" above its original). */
export function statusArticle(status: MastodonStatus, opts: StatusRenderOptions): SafeHtml {
  const boost = status.reblog ? status : null;
  const s = status.reblog ?? status;
  const name = displayName(s.account);
  const permalink = s.url ?? s.uri;
  const body = html`${s.content ? html`<div class="content">${markup(s.account, s.content)}</div>` : ''}${media(s.media_attachments, s.sensitive)}${s.poll ? poll(s.poll) : ''}`;
  return html`<article class="status${opts.focus ? ' focus' : ''}" id="${`status-${s.id}`}"${s.language ? html` lang="${s.language}"` : ''} aria-label="${`Post by ${name}`}">
${boost ? html`<p class="boosted"><a href="${boost.account.url}">${displayName(boost.account)}</a> boosted</p>` : ''}
<header><a class="author" href="${s.account.url}"><img src="${s.account.avatar}" alt="" width="44" height="44"><span><span class="name">${name}</span><span class="handle">${fullHandle(s.account, opts.localDomain)}</span></span></a>
<a class="meta" href="${permalink}"><time datetime="${s.created_at}">${when(s.created_at)}</time>${s.edited_at ? ' (edited)' : ''}</a></header>
${s.spoiler_text ? html`<details><summary>${s.spoiler_text}</summary>${body}</details>` : body}
<ul class="stats" aria-label="Reactions"><li>${s.replies_count} ${s.replies_count === 1 ? 'reply' : 'replies'}</li><li>${s.reblogs_count} ${s.reblogs_count === 1 ? 'boost' : 'boosts'}</li><li>${s.favourites_count} ${s.favourites_count === 1 ? 'favourite' : 'favourites'}</li>${s.visibility === 'unlisted' ? html`<li>Unlisted</li>` : ''}</ul>
</article>`;
}

/** The plain text of a status for previews: its content warning when it has one, else its text. */
export function statusSummary(status: MastodonStatus, max = 300): string {
  const s = status.reblog ?? status;
  if (s.spoiler_text) return `Content warning: ${plainText(s.spoiler_text, max)}`;
  const text = plainText(s.content ?? '', max);
  const attachments = s.media_attachments.length ? ` [${s.media_attachments.length} attachment${s.media_attachments.length === 1 ? '' : 's'}]` : '';
  return text + attachments;
}
