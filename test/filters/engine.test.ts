/**
 * The filter engine (src/lib/filter-engine.ts), pure: keyword matching with Unicode word
 * boundaries, the text a status is matched on, contexts, expiry, status filters, reblogs.
 */
import { describe, it, expect } from 'vitest';
import {
  applyFilters,
  compileFilterSet,
  filterableFromStatusJson,
  htmlToText,
  keywordRegExp,
  type FilterableStatus,
} from '../../src/services/filter-engine.ts';
import type { FilterRow } from '../../src/serializers/filter.ts';
import type { MastodonStatus } from '../../src/serializers/status.ts';

/** Streaming and push hold serialized statuses: the type checker holds that they fit. */
const fromSerialized = (s: MastodonStatus): FilterableStatus => filterableFromStatusJson(s);
void fromSerialized;

const matches = (keyword: string, wholeWord: boolean, text: string) => keywordRegExp(keyword, wholeWord).test(text);

function filter(over: Partial<FilterRow> & { words?: [string, boolean][] } = {}): FilterRow {
  const { words = [], ...rest } = over;
  return {
    id: '1',
    title: 'Spoilers',
    context: ['home', 'public'],
    action: 'warn',
    expiresAt: null,
    keywords: words.map(([keyword, wholeWord], i) => ({ id: String(100 + i), keyword, wholeWord })),
    statuses: [],
    ...rest,
  };
}

const status = (text: string, over: Partial<FilterableStatus> = {}): FilterableStatus => ({ id: '500', reblogOfId: null, accountId: '9', text, ...over });

describe('whole_word', () => {
  it('a hashtag keyword: no boundary before the #, one after the tag', () => {
    expect(matches('#Tag', true, 'I like #tag.')).toBe(true);
    expect(matches('#Tag', true, '#TAG, again')).toBe(true);
    expect(matches('#Tag', true, 'so#tag')).toBe(true);
    expect(matches('#Tag', true, 'I like #tagging')).toBe(false);
    expect(matches('#Tag', true, 'I like #tag_line')).toBe(false);
    // A bare word matches the hashtag too (# is no word character), as in Mastodon.
    expect(matches('tag', true, 'see #tag!')).toBe(true);
    expect(matches('tag', true, 'tags')).toBe(false);
    expect(matches('tag', false, 'tags')).toBe(true);
  });

  it('punctuation: boundaries only where the keyword has word characters at its ends', () => {
    expect(matches('spoiler', true, '(spoiler)')).toBe(true);
    expect(matches('spoiler', true, 'spoiler!!!')).toBe(true);
    expect(matches('spoiler', true, '"Spoiler:" here')).toBe(true);
    expect(matches('spoiler', true, 'spoilers ahead')).toBe(false);
    expect(matches('spoiler', true, 'unspoiler')).toBe(false);
    expect(matches('@twitter.com', true, 'me@twitter.com')).toBe(true);
    expect(matches('https://t.co/', true, 'see https://t.co/abc')).toBe(true);
    expect(matches('a.b', true, 'axb')).toBe(false); // regex characters are literal
    expect(matches('c++', true, 'I write C++ daily')).toBe(true);
    expect(matches('(x)', false, 'f(x) = 1')).toBe(true);
  });

  it('Cyrillic: letters are word characters, case folds', () => {
    expect(matches('кот', true, 'Мой кот спит.')).toBe(true);
    expect(matches('кот', true, 'КОТ!')).toBe(true);
    expect(matches('кот', true, 'который час')).toBe(false);
    expect(matches('кот', false, 'который час')).toBe(true);
  });

  it('Japanese: kana and kanji are word characters (as Ruby\'s [[:word:]])', () => {
    expect(matches('ねこ', true, 'かわいい ねこ!')).toBe(true);
    expect(matches('ねこ', true, '「ねこ」')).toBe(true);
    expect(matches('ねこ', true, 'かわいいねこ')).toBe(false);
    expect(matches('ねこ', false, 'かわいいねこ')).toBe(true);
    expect(matches('猫', true, '猫、好き')).toBe(true);
    expect(matches('猫', true, '子猫')).toBe(false);
  });

  it('accents and digits are word characters', () => {
    expect(matches('cafe', true, 'café')).toBe(false);
    expect(matches('café', true, 'Un CAFÉ.')).toBe(true);
    expect(matches('4', true, '42')).toBe(false);
    expect(matches('4', true, '4 you')).toBe(true);
  });
});

describe('the text a status is matched on', () => {
  it('HTML to text: tags dropped, entities decoded, paragraphs and line breaks kept apart', () => {
    expect(htmlToText('<p>Hello&nbsp;<a href="https://x.test/tags/tag" class="mention hashtag">#<span>tag</span></a></p><p>a&amp;b<br>next</p>')).toBe('Hello\u00a0#tag\n\na&b\nnext');
    // Two paragraphs never glue into one word.
    expect(matches('endstart', false, htmlToText('<p>end</p><p>start</p>'))).toBe(false);
    // Attribute values are not text.
    expect(matches('secret', false, htmlToText('<a href="https://secret.test/">link</a>'))).toBe(false);
  });

  it('from a Status JSON: content warning, content, poll options, media descriptions; a reblog by its original', () => {
    const json = {
      id: '7',
      account: { id: '2' },
      content: '<p>outer</p>',
      spoiler_text: '',
      media_attachments: [],
      poll: null,
      reblog: {
        id: '6',
        account: { id: '3' },
        content: '<p>Body &lt;text&gt;</p>',
        spoiler_text: 'CW here',
        media_attachments: [{ description: 'a cat photo' }, { description: null }],
        poll: { options: [{ title: 'yes' }, { title: 'nope' }] },
        reblog: null,
      },
    };
    expect(filterableFromStatusJson(json)).toEqual({ id: '7', reblogOfId: '6', accountId: '2', text: 'CW here\n\nBody <text>\n\nyes\n\nnope\n\na cat photo' });
    expect(filterableFromStatusJson(json.reblog).reblogOfId).toBeNull();
  });
});

describe('applyFilters', () => {
  const NOW = new Date('2026-05-01T00:00:00.000Z');

  it('warn annotates with the FilterResult; hide hides; other contexts do not apply', () => {
    const set = compileFilterSet('1', [
      filter({ words: [['spoiler', true], ['ending', false], ['absent', false]] }),
      filter({ id: '2', title: 'Gone', action: 'hide', context: ['home'], words: [['ending', true]] }),
    ]);
    const out = applyFilters(set, status('Spoiler: the ending'), 'home');
    expect(out).toEqual({
      hidden: true,
      filtered: [
        { filter: { id: '1', title: 'Spoilers', context: ['home', 'public'], expires_at: null, filter_action: 'warn' }, keyword_matches: ['spoiler', 'ending'], status_matches: null },
        { filter: { id: '2', title: 'Gone', context: ['home'], expires_at: null, filter_action: 'hide' }, keyword_matches: ['ending'], status_matches: null },
      ],
    });
    expect(applyFilters(set, status('Spoiler: the ending'), 'public')).toEqual({ hidden: false, filtered: [out.filtered[0]] });
    expect(applyFilters(set, status('Spoiler: the ending'), 'thread')).toEqual({ hidden: false, filtered: [] });
    expect(applyFilters(set, status('nothing to see'), 'home')).toEqual({ hidden: false, filtered: [] });
  });

  it('an expired filter stops applying by itself', () => {
    const set = compileFilterSet('1', [filter({ expiresAt: new Date(NOW.getTime() + 1000), words: [['spoiler', true]] })]);
    expect(applyFilters(set, status('spoiler'), 'home', NOW).filtered).toHaveLength(1);
    expect(applyFilters(set, status('spoiler'), 'home', new Date(NOW.getTime() + 1000)).filtered).toHaveLength(0);
  });

  it('status filters match the status or the one it reblogs; keyword_matches null then', () => {
    const set = compileFilterSet('1', [filter({ statuses: [{ id: '70', statusId: '600' }] })]);
    expect(applyFilters(set, status('anything', { id: '600' }), 'home').filtered[0]).toMatchObject({ keyword_matches: null, status_matches: ['600'] });
    expect(applyFilters(set, status('anything', { id: '601', reblogOfId: '600' }), 'home').filtered[0]).toMatchObject({ status_matches: ['600'] });
    expect(applyFilters(set, status('anything', { id: '602' }), 'home').filtered).toEqual([]);
    // A filter with statuses and keywords: a keyword match shows no status matched as [].
    const both = compileFilterSet('1', [filter({ statuses: [{ id: '70', statusId: '600' }], words: [['word', true]] })]);
    expect(applyFilters(both, status('a word', { id: '603' }), 'home').filtered[0]).toMatchObject({ keyword_matches: ['word'], status_matches: [] });
  });

  it("the viewer's own statuses are never filtered", () => {
    const set = compileFilterSet('9', [filter({ action: 'hide', words: [['spoiler', true]] })]);
    expect(applyFilters(set, status('spoiler', { accountId: '9' }), 'home')).toEqual({ hidden: false, filtered: [] });
  });
});
