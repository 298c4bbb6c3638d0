/**
 * Languages a status, a filter or the server itself can be tagged with: every ISO 639-1 code,
 * the regional Chinese variants Mastodon distinguishes, and the ISO 639-3 languages Mastodon
 * accepts that have no two-letter code. Names are the English names. The order (ISO 639-1
 * alphabetically, then the regional variants, then ISO 639-3) is the order
 * GET /api/v1/instance/languages lists them in.
 */

export interface Language {
  code: string;
  name: string;
}

const ISO_639_1: ReadonlyArray<readonly [string, string]> = [
  ['aa', 'Afar'], ['ab', 'Abkhazian'], ['ae', 'Avestan'], ['af', 'Afrikaans'], ['ak', 'Akan'],
  ['am', 'Amharic'], ['an', 'Aragonese'], ['ar', 'Arabic'], ['as', 'Assamese'], ['av', 'Avaric'],
  ['ay', 'Aymara'], ['az', 'Azerbaijani'],
  ['ba', 'Bashkir'], ['be', 'Belarusian'], ['bg', 'Bulgarian'], ['bh', 'Bihari'], ['bi', 'Bislama'],
  ['bm', 'Bambara'], ['bn', 'Bengali'], ['bo', 'Tibetan'], ['br', 'Breton'], ['bs', 'Bosnian'],
  ['ca', 'Catalan'], ['ce', 'Chechen'], ['ch', 'Chamorro'], ['co', 'Corsican'], ['cr', 'Cree'],
  ['cs', 'Czech'], ['cu', 'Church Slavonic'], ['cv', 'Chuvash'], ['cy', 'Welsh'],
  ['da', 'Danish'], ['de', 'German'], ['dv', 'Divehi'], ['dz', 'Dzongkha'],
  ['ee', 'Ewe'], ['el', 'Greek'], ['en', 'English'], ['eo', 'Esperanto'], ['es', 'Spanish'],
  ['et', 'Estonian'], ['eu', 'Basque'],
  ['fa', 'Persian'], ['ff', 'Fulah'], ['fi', 'Finnish'], ['fj', 'Fijian'], ['fo', 'Faroese'],
  ['fr', 'French'], ['fy', 'Western Frisian'],
  ['ga', 'Irish'], ['gd', 'Scottish Gaelic'], ['gl', 'Galician'], ['gn', 'Guarani'], ['gu', 'Gujarati'],
  ['gv', 'Manx'],
  ['ha', 'Hausa'], ['he', 'Hebrew'], ['hi', 'Hindi'], ['ho', 'Hiri Motu'], ['hr', 'Croatian'],
  ['ht', 'Haitian Creole'], ['hu', 'Hungarian'], ['hy', 'Armenian'], ['hz', 'Herero'],
  ['ia', 'Interlingua'], ['id', 'Indonesian'], ['ie', 'Interlingue'], ['ig', 'Igbo'], ['ii', 'Nuosu'],
  ['ik', 'Inupiaq'], ['io', 'Ido'], ['is', 'Icelandic'], ['it', 'Italian'], ['iu', 'Inuktitut'],
  ['ja', 'Japanese'], ['jv', 'Javanese'],
  ['ka', 'Georgian'], ['kg', 'Kongo'], ['ki', 'Kikuyu'], ['kj', 'Kuanyama'], ['kk', 'Kazakh'],
  ['kl', 'Kalaallisut'], ['km', 'Khmer'], ['kn', 'Kannada'], ['ko', 'Korean'], ['kr', 'Kanuri'],
  ['ks', 'Kashmiri'], ['ku', 'Kurdish (Kurmanji)'], ['kv', 'Komi'], ['kw', 'Cornish'], ['ky', 'Kyrgyz'],
  ['la', 'Latin'], ['lb', 'Luxembourgish'], ['lg', 'Ganda'], ['li', 'Limburgish'], ['ln', 'Lingala'],
  ['lo', 'Lao'], ['lt', 'Lithuanian'], ['lu', 'Luba-Katanga'], ['lv', 'Latvian'],
  ['mg', 'Malagasy'], ['mh', 'Marshallese'], ['mi', 'Māori'], ['mk', 'Macedonian'], ['ml', 'Malayalam'],
  ['mn', 'Mongolian'], ['mr', 'Marathi'], ['ms', 'Malay'], ['mt', 'Maltese'], ['my', 'Burmese'],
  ['na', 'Nauru'], ['nb', 'Norwegian Bokmål'], ['nd', 'North Ndebele'], ['ne', 'Nepali'], ['ng', 'Ndonga'],
  ['nl', 'Dutch'], ['nn', 'Norwegian Nynorsk'], ['no', 'Norwegian'], ['nr', 'South Ndebele'],
  ['nv', 'Navajo'], ['ny', 'Chichewa'],
  ['oc', 'Occitan'], ['oj', 'Ojibwe'], ['om', 'Oromo'], ['or', 'Odia'], ['os', 'Ossetian'],
  ['pa', 'Punjabi'], ['pi', 'Pali'], ['pl', 'Polish'], ['ps', 'Pashto'], ['pt', 'Portuguese'],
  ['qu', 'Quechua'],
  ['rm', 'Romansh'], ['rn', 'Kirundi'], ['ro', 'Romanian'], ['ru', 'Russian'], ['rw', 'Kinyarwanda'],
  ['sa', 'Sanskrit'], ['sc', 'Sardinian'], ['sd', 'Sindhi'], ['se', 'Northern Sami'], ['sg', 'Sango'],
  ['si', 'Sinhala'], ['sk', 'Slovak'], ['sl', 'Slovenian'], ['sm', 'Samoan'], ['sn', 'Shona'],
  ['so', 'Somali'], ['sq', 'Albanian'], ['sr', 'Serbian'], ['ss', 'Swati'], ['st', 'Southern Sotho'],
  ['su', 'Sundanese'], ['sv', 'Swedish'], ['sw', 'Swahili'],
  ['ta', 'Tamil'], ['te', 'Telugu'], ['tg', 'Tajik'], ['th', 'Thai'], ['ti', 'Tigrinya'],
  ['tk', 'Turkmen'], ['tl', 'Tagalog'], ['tn', 'Tswana'], ['to', 'Tongan'], ['tr', 'Turkish'],
  ['ts', 'Tsonga'], ['tt', 'Tatar'], ['tw', 'Twi'], ['ty', 'Tahitian'],
  ['ug', 'Uyghur'], ['uk', 'Ukrainian'], ['ur', 'Urdu'], ['uz', 'Uzbek'],
  ['ve', 'Venda'], ['vi', 'Vietnamese'], ['vo', 'Volapük'],
  ['wa', 'Walloon'], ['wo', 'Wolof'],
  ['xh', 'Xhosa'],
  ['yi', 'Yiddish'], ['yo', 'Yoruba'],
  ['za', 'Zhuang'], ['zh', 'Chinese'], ['zu', 'Zulu'],
];

/** Chinese is a family; statuses may say which written/spoken variety they use. */
const REGIONAL: ReadonlyArray<readonly [string, string]> = [
  ['zh-CN', 'Chinese (China)'],
  ['zh-HK', 'Chinese (Hong Kong)'],
  ['zh-TW', 'Chinese (Taiwan)'],
  ['zh-YUE', 'Cantonese'],
];

/** Languages with only a three-letter code that people post in on the fediverse. */
const ISO_639_3: ReadonlyArray<readonly [string, string]> = [
  ['ast', 'Asturian'], ['chr', 'Cherokee'], ['ckb', 'Kurdish (Sorani)'], ['cnr', 'Montenegrin'],
  ['jbo', 'Lojban'], ['kab', 'Kabyle'], ['ldn', 'Láadan'], ['lfn', 'Lingua Franca Nova'],
  ['sco', 'Scots'], ['sma', 'Southern Sami'], ['smj', 'Lule Sami'], ['szl', 'Silesian'],
  ['tok', 'Toki Pona'], ['xal', 'Kalmyk'], ['zba', 'Balaibalan'], ['zgh', 'Standard Moroccan Tamazight'],
];

/** Every supported language, in API order. */
export const LANGUAGES: readonly Language[] = Object.freeze(
  [...ISO_639_1, ...REGIONAL, ...ISO_639_3].map(([code, name]) => Object.freeze({ code, name })),
);

const BY_CODE: ReadonlyMap<string, Language> = new Map(LANGUAGES.map((l) => [l.code.toLowerCase(), l]));

/** Whether `code` is a supported language code exactly as clients send it (case-insensitive). */
export function isSupportedLanguage(code: string): boolean {
  return BY_CODE.has(code.toLowerCase());
}

/** The English name of a supported language code, or undefined. */
export function languageName(code: string): string | undefined {
  return BY_CODE.get(code.toLowerCase())?.name;
}

/**
 * Maps a language tag to a supported code, or null: an exact match first ("zh-TW", "tok"), then
 * the primary subtag of a longer tag ("en-US" → "en", "pt_BR" → "pt"). Codes come back in their
 * canonical spelling ("ZH-tw" → "zh-TW").
 */
export function normalizeLanguage(tag: string | null | undefined): string | null {
  if (!tag) return null;
  const trimmed = tag.trim();
  const exact = BY_CODE.get(trimmed.toLowerCase());
  if (exact) return exact.code;
  const primary = trimmed.split(/[-_]/)[0]!;
  return BY_CODE.get(primary.toLowerCase())?.code ?? null;
}
