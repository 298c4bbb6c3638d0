/**
 * RSS 2.0 feeds of public posts, as Mastodon's (its RSS::AccountSerializer and
 * RSS::TagSerializer): the channel names the account (or the tag) and links its page, each item
 * is one public post with its permalink as link and guid, its date, its content (the content
 * warning first) as the description, its media as media:content with their descriptions, and its
 * hashtags as categories.
 */
import { stringResponse } from '../../http/index.ts';
import { escapeHtml } from '../../lib/html.ts';
import { plainText } from '../../lib/sanitize.ts';
import type { MastodonStatus } from '../../serializers/status.ts';
import { displayName, fullHandle } from './render.ts';
import type { MastodonAccount } from '../../serializers/account.ts';

const x = (s: string | number) => escapeHtml(String(s));

function item(s: MastodonStatus): string {
  const link = s.url ?? s.uri;
  const description = (s.spoiler_text ? `<p>${escapeHtml(s.spoiler_text)}</p><hr>` : '') + (s.content ?? '');
  const media = s.media_attachments
    .map((m) => {
      const url = m.url ?? m.remote_url;
      if (!url) return '';
      const medium = m.type === 'image' || m.type === 'unknown' ? 'image' : m.type === 'audio' ? 'audio' : 'video';
      return `<media:content url="${x(url)}" medium="${medium}">${m.description ? `<media:description type="plain">${x(m.description)}</media:description>` : ''}</media:content>`;
    })
    .join('');
  return `<item><guid isPermaLink="true">${x(link)}</guid><link>${x(link)}</link><pubDate>${new Date(s.created_at).toUTCString()}</pubDate>` +
    `<description>${x(description)}</description>${media}${s.tags.map((t) => `<category>${x(t.name)}</category>`).join('')}</item>`;
}

function feed(channel: { title: string; description: string; link: string; image?: string; generator: string }, statuses: MastodonStatus[]): Response {
  const last = statuses[0] ? `<lastBuildDate>${new Date(statuses[0].created_at).toUTCString()}</lastBuildDate>` : '';
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:webfeeds="http://webfeeds.org/rss/1.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>` +
    `<title>${x(channel.title)}</title><description>${x(channel.description)}</description><link>${x(channel.link)}</link>` +
    (channel.image ? `<image><url>${x(channel.image)}</url><title>${x(channel.title)}</title><link>${x(channel.link)}</link></image><webfeeds:icon>${x(channel.image)}</webfeeds:icon>` : '') +
    `${last}<generator>${x(channel.generator)}</generator>` +
    statuses.map(item).join('') +
    `</channel></rss>\n`;
  return stringResponse(xml, {
    headers: { 'content-type': 'application/rss+xml; charset=utf-8', 'cache-control': 'public, max-age=60', 'x-content-type-options': 'nosniff' },
  });
}

export function accountFeed(account: MastodonAccount, statuses: MastodonStatus[], opts: { localDomain: string; generator: string }): Response {
  return feed(
    {
      title: displayName(account),
      description: `Public posts from ${fullHandle(account, opts.localDomain)}`,
      link: account.url,
      image: account.avatar,
      generator: opts.generator,
    },
    statuses,
  );
}

export function tagFeed(tag: string, link: string, statuses: MastodonStatus[], opts: { generator: string }): Response {
  const name = plainText(tag, 100);
  return feed({ title: `#${name}`, description: `Public posts tagged #${name}`, link, generator: opts.generator }, statuses);
}
