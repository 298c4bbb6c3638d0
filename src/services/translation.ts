/**
 * Machine translation through a LibreTranslate-compatible server (`translation.url`, with
 * `translation.apiKey` when it asks for one), as Mastodon's TranslationService::LibreTranslate:
 * POST /translate with every text of a status at once (its content as HTML, content warning,
 * media descriptions, poll options; source its language or `auto`), GET /languages for what it
 * offers (kept an hour per instance). Both through the bounded fetcher (lib/safe-fetch.ts), the
 * operator's own server being allowed on a private address. No server configured, or one that
 * fails: TranslationUnavailable (the route's 503).
 */
import type { Services } from '../context.ts';
import { safeFetch } from '../lib/safe-fetch.ts';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../lib/json-depth.ts';

export const PROVIDER = 'LibreTranslate';
const TIMEOUT_MS = 10_000;
const LANGUAGES_TTL_MS = 3_600_000;
const MAX_BYTES = 4 * 1024 * 1024;

export class TranslationUnavailable extends Error {
  override name = 'TranslationUnavailable';
}

export interface Translation {
  content: string;
  spoiler_text: string;
  language: string;
  poll?: { id: string; options: { title: string }[] };
  media_attachments: { id: string; description: string }[];
  detected_source_language: string;
  provider: string;
}

async function call(services: Services, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const base = services.config.translation.url;
  if (!base) throw new TranslationUnavailable('no translation server');
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  try {
    const res = await safeFetch(url, {
      allowPrivateAddresses: true,
      userAgent: `Roost/${services.version}`,
      method,
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
      maxRedirects: method === 'POST' ? 0 : 3,
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BYTES,
    });
    if (res.status !== 200) throw new TranslationUnavailable(`translation server answered ${res.status}`);
    const text = res.body.toString('utf8');
    if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) throw new TranslationUnavailable('translation server answered too deep a document');
    return JSON.parse(text);
  } catch (e) {
    if (e instanceof TranslationUnavailable) throw e;
    throw new TranslationUnavailable(`translation server: ${(e as Error).message}`);
  }
}

const languageCache = new WeakMap<Services, { at: number; languages: Record<string, string[]> }>();

/** Source language → the target languages the server offers (empty when none is configured). */
export async function translationLanguages(services: Services): Promise<Record<string, string[]>> {
  if (!services.config.translation.url) return {};
  const cached = languageCache.get(services);
  if (cached && Date.now() - cached.at < LANGUAGES_TTL_MS) return cached.languages;
  const list = await call(services, 'GET', 'languages');
  const languages: Record<string, string[]> = {};
  if (Array.isArray(list)) {
    for (const l of list as { code?: unknown; targets?: unknown }[]) {
      if (!l || typeof l.code !== 'string' || !/^[a-zA-Z-]{2,12}$/.test(l.code)) continue;
      const targets = Array.isArray(l.targets) ? l.targets.filter((t): t is string => typeof t === 'string' && t !== l.code && t.length <= 12) : [];
      languages[l.code] = targets;
    }
  }
  languageCache.set(services, { at: Date.now(), languages });
  return languages;
}

/** The texts of a status to translate: one statement. Null when the status is not there. */
async function statusTexts(services: Services, statusId: string) {
  const [row] = await services.db.sql.query<{
    content: string; spoiler_text: string; language: string | null;
    media: { id: string; description: string | null }[] | string; poll_id: string | null; options: string[] | null;
  }>(
    `select s.content, s.spoiler_text, s.language,
            coalesce((select json_agg(json_build_object('id', m.id::text, 'description', m.description) order by m.position, m.id)
                        from media_attachments m where m.status_id = s.id), '[]'::json) as media,
            p.id::text as poll_id, p.options
       from statuses s left join polls p on p.status_id = s.id where s.id = $1`,
    [statusId],
  );
  if (!row) return null;
  const media = (typeof row.media === 'string' ? JSON.parse(row.media) : row.media) as { id: string; description: string | null }[];
  return { ...row, media: media.filter((m) => m.description) as { id: string; description: string }[] };
}

/** A status's texts translated into `target` (a language code). */
export async function translateStatus(services: Services, statusId: string, target: string): Promise<Translation | null> {
  if (!services.config.translation.url) throw new TranslationUnavailable('no translation server');
  const s = await statusTexts(services, statusId);
  if (!s) return null;
  const texts = [s.content, s.spoiler_text, ...s.media.map((m) => m.description), ...(s.options ?? [])];
  const answer = (await call(services, 'POST', 'translate', {
    q: texts,
    source: s.language ?? 'auto',
    target,
    format: 'html',
    ...(services.config.translation.apiKey ? { api_key: services.config.translation.apiKey } : {}),
  })) as { translatedText?: unknown; detectedLanguage?: unknown };
  const out = answer?.translatedText;
  if (!Array.isArray(out) || out.length !== texts.length || !out.every((t) => typeof t === 'string')) {
    throw new TranslationUnavailable('translation server answered an unexpected document');
  }
  const detected = Array.isArray(answer.detectedLanguage) ? answer.detectedLanguage[0] : answer.detectedLanguage;
  const detectedCode = detected && typeof (detected as { language?: unknown }).language === 'string' ? (detected as { language: string }).language : null;
  let i = 2;
  const media = s.media.map((m) => ({ id: m.id, description: out[i++] as string }));
  const options = (s.options ?? []).map(() => ({ title: out[i++] as string }));
  return {
    content: out[0] as string,
    spoiler_text: out[1] as string,
    language: target,
    ...(s.poll_id ? { poll: { id: s.poll_id, options } } : {}),
    media_attachments: media,
    detected_source_language: s.language ?? detectedCode ?? 'und',
    provider: PROVIDER,
  };
}
