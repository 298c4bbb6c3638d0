/**
 * Content negotiation of the URLs that are both a page and an ActivityPub object: the client's
 * most preferred media type decides, as Fedify decides whether to answer (its acceptsJsonLd): a
 * browser (text/html or XHTML first) gets the page; an Accept naming ActivityPub's types or JSON
 * gets the JSON; anything else (none, `*∕*`, curl's default) gets the page, as Mastodon's default format.
 */

interface Ranked {
  type: string;
  q: number;
  order: number;
}

function ranked(accept: string): Ranked[] {
  const out: Ranked[] = [];
  accept.split(',').forEach((part, order) => {
    const [type, ...params] = part.split(';');
    const t = (type ?? '').trim().toLowerCase();
    if (!t) return;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (Number.isFinite(q) && q > 0) out.push({ type: t, q, order });
  });
  return out.sort((a, b) => b.q - a.q || a.order - b.order);
}

const JSON_TYPES = new Set(['application/activity+json', 'application/ld+json', 'application/json']);

/** Whether the request wants the JSON (ActivityPub or plain) rather than the page. */
export function wantsJson(accept: string | null): boolean {
  if (!accept) return false;
  const types = ranked(accept.slice(0, 1024));
  if (types.length === 0) return false;
  if (types[0]!.type === 'text/html' || types[0]!.type === 'application/xhtml+xml') return false;
  return types.some((t) => JSON_TYPES.has(t.type));
}
