import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  DEFAULT_PRIVACY_POLICY_UPDATED_AT,
  INSTANCE_ACTIVITY_WEEKS,
  MASTODON_API_VERSION,
  instanceActivityWeekStarts,
  instanceVersionString,
  obfuscateDomain,
  registrationsEnabled,
  serializeDomainBlocks,
  serializeExtendedDescription,
  serializeInstanceActivity,
  serializeInstanceLanguages,
  serializeInstancePeers,
  serializeInstanceV1,
  serializeInstanceV2,
  serializePrivacyPolicy,
  serializeRules,
  serializeTermsOfService,
  type InstanceView,
} from '../../src/serializers/instance.ts';
import { isSupportedLanguage, languageName, normalizeLanguage } from '../../src/lib/languages.ts';
import { MIME_TYPES, contactAccount, fixtureView, type ContactAccount } from './instance.fixture.ts';
import { unknownKeys, validate } from './openapi-check.ts';

const EXTENDED_HTML =
  '<h2>About</h2>\n<p>Be <strong>kind</strong>. See <a href="https://roost.example/about" ' +
  'rel="nofollow noopener noreferrer" target="_blank">our rules</a>.</p>\n';

const RULES = [
  { id: '1', text: 'Be kind.', hint: 'No harassment, no dogpiling.', translations: {} },
  {
    id: '2',
    text: 'Mark sensitive media.',
    hint: '',
    translations: { de: { text: 'Sensible Medien markieren.', hint: '' } },
  },
];

function withView(patch: Partial<InstanceView<ContactAccount>>): InstanceView<ContactAccount> {
  return { ...fixtureView, ...patch };
}

describe('serializeInstanceV2', () => {
  it('renders the fixture view as the exact Mastodon v2 instance', () => {
    expect(serializeInstanceV2(fixtureView)).toEqual({
      domain: 'roost.example',
      title: 'Roost Example',
      version: '4.3.0 (compatible; Roost 0.1.0)',
      source_url: 'https://git.example/roost/roost',
      description: 'A small Roost server for tests & examples.',
      usage: { users: { active_month: 9 } },
      thumbnail: {
        url: 'https://roost.example/thumbnail.png',
        blurhash: 'UaHc==tPN19c12obWVoLM_Irt3-mI=oMoMWV',
        versions: {
          '@1x': 'https://roost.example/thumbnail.png',
          '@2x': 'https://roost.example/thumbnail@2x.png',
        },
        description: 'A bird on a branch at dusk.',
      },
      icon: [
        { src: 'https://roost.example/icon-48.png', size: '48x48' },
        { src: 'https://roost.example/icon-192.png', size: '192x192' },
      ],
      languages: ['en', 'de'],
      configuration: {
        urls: {
          streaming: 'wss://roost.example',
          status: 'https://status.roost.example',
          about: 'https://roost.example/about',
          privacy_policy: 'https://roost.example/privacy-policy',
          terms_of_service: null,
        },
        vapid: { public_key: 'BCk-QqERU0q-CfYZjcuB6lnyyOYfJ2AifKqfeGIm7Z-HiTU5T9eTG5GxVA0_OH5mMlI4UkkDTpaZwozy0TzdZ2M=' },
        accounts: {
          max_display_name_length: 30,
          max_note_length: 500,
          max_featured_tags: 10,
          max_pinned_statuses: 5,
          max_profile_fields: 4,
          profile_field_name_limit: 255,
          profile_field_value_limit: 255,
        },
        statuses: { max_characters: 500, max_media_attachments: 4, characters_reserved_per_url: 23 },
        media_attachments: {
          description_limit: 1500,
          image_matrix_limit: 33177600,
          image_size_limit: 16777216,
          supported_mime_types: MIME_TYPES,
          video_frame_rate_limit: 120,
          video_matrix_limit: 8294400,
          video_size_limit: 103809024,
        },
        polls: { max_options: 4, max_characters_per_option: 50, min_expiration: 300, max_expiration: 2629746 },
        translation: { enabled: false },
        timelines_access: {
          live_feeds: { local: 'public', remote: 'public' },
          hashtag_feeds: { local: 'public', remote: 'public' },
          trending_link_feeds: { local: 'public', remote: 'public' },
        },
        limited_federation: false,
      },
      registrations: {
        enabled: true,
        approval_required: true,
        reason_required: true,
        message: null,
        min_age: 16,
        url: null,
      },
      api_versions: { mastodon: 2 },
      wrapstodon: null,
      contact: { email: 'staff@roost.example', account: contactAccount },
      rules: RULES,
    });
  });

  it('keeps Mastodon’s top-level key order', () => {
    expect(Object.keys(serializeInstanceV2(fixtureView))).toEqual([
      'domain', 'title', 'version', 'source_url', 'description', 'usage', 'thumbnail', 'icon',
      'languages', 'configuration', 'registrations', 'api_versions', 'wrapstodon', 'contact', 'rules',
    ]);
  });

  it('reports a version whose leading semver is the Mastodon API level', () => {
    const { version, api_versions } = serializeInstanceV2(fixtureView);
    expect(/^(\d+)\.(\d+)\.(\d+)/.exec(version)?.slice(1).map(Number)).toEqual([4, 3, 0]);
    expect(version).toContain('Roost 0.1.0');
    expect(api_versions.mastodon).toBe(MASTODON_API_VERSION);
    expect(instanceVersionString('1.2.3-rc.1')).toBe('4.3.0 (compatible; Roost 1.2.3-rc.1)');
  });

  it('open registrations: enabled, no approval, no reason, no message', () => {
    const reg = serializeInstanceV2(
      withView({ registrations: { ...fixtureView.registrations, mode: 'open' } }),
    ).registrations;
    expect(reg).toEqual({ enabled: true, approval_required: false, reason_required: false, message: null, min_age: 16, url: null });
  });

  it('closed registrations: the message is rendered from Markdown', () => {
    const reg = serializeInstanceV2(
      withView({ registrations: { ...fixtureView.registrations, mode: 'closed' } }),
    ).registrations;
    expect(reg).toEqual({
      enabled: false,
      approval_required: false,
      reason_required: false,
      message: '<p>Sign-ups are <strong>paused</strong>.</p>\n',
      min_age: 16,
      url: null,
    });
  });

  it('closed registrations without a message, or with a blank one: message is null', () => {
    for (const closedMessageMarkdown of [null, '', '  \n ']) {
      const reg = serializeInstanceV2(
        withView({ registrations: { ...fixtureView.registrations, mode: 'closed', closedMessageMarkdown } }),
      ).registrations;
      expect(reg.message).toBeNull();
    }
  });

  it('escapes HTML in the closed-registrations message', () => {
    const reg = serializeInstanceV2(
      withView({
        registrations: { ...fixtureView.registrations, mode: 'closed', closedMessageMarkdown: 'No <script>alert(1)</script>' },
      }),
    ).registrations;
    expect(reg.message).toBe('<p>No &lt;script&gt;alert(1)&lt;/script&gt;</p>\n');
  });

  it('reports zero active users in limited-federation mode', () => {
    const out = serializeInstanceV2(withView({ limitedFederation: true }));
    expect(out.usage.users.active_month).toBe(0);
    expect(out.configuration.limited_federation).toBe(true);
  });

  it('clamps broken counters to non-negative integers', () => {
    const out = serializeInstanceV2(withView({ stats: { userCount: 1, statusCount: 1, domainCount: 1, activeMonth: -3 } }));
    expect(out.usage.users.active_month).toBe(0);
    const v1 = serializeInstanceV1(withView({ stats: { userCount: 2.7, statusCount: NaN, domainCount: 5, activeMonth: 1 } }));
    expect(v1.stats).toEqual({ user_count: 2, status_count: 0, domain_count: 5 });
  });

  it('has a null contact account when none is configured', () => {
    const out = serializeInstanceV2(withView({ contact: { email: '', account: null } }));
    expect(out.contact).toEqual({ email: '', account: null });
  });

  it('does not share arrays with the view (callers may mutate the output)', () => {
    const out = serializeInstanceV2(fixtureView);
    out.languages.push('fr');
    out.configuration.media_attachments.supported_mime_types.pop();
    expect(fixtureView.languages).toEqual(['en', 'de']);
    expect(DEFAULT_LIMITS.mediaAttachments.supportedMimeTypes).toHaveLength(MIME_TYPES.length);
  });
});

describe('serializeInstanceV1', () => {
  it('renders the fixture view as the exact Mastodon v1 instance', () => {
    expect(serializeInstanceV1(fixtureView)).toEqual({
      uri: 'roost.example',
      title: 'Roost Example',
      short_description: 'A small Roost server for tests & examples.',
      description: EXTENDED_HTML,
      email: 'staff@roost.example',
      version: '4.3.0 (compatible; Roost 0.1.0)',
      urls: { streaming_api: 'wss://roost.example', status: 'https://status.roost.example' },
      stats: { user_count: 42, status_count: 1234, domain_count: 17 },
      thumbnail: 'https://roost.example/thumbnail.png',
      languages: ['en', 'de'],
      registrations: true,
      approval_required: true,
      invites_enabled: false,
      configuration: {
        accounts: { max_featured_tags: 10 },
        statuses: { max_characters: 500, max_media_attachments: 4, characters_reserved_per_url: 23 },
        media_attachments: {
          supported_mime_types: MIME_TYPES,
          image_size_limit: 16777216,
          image_matrix_limit: 33177600,
          video_size_limit: 103809024,
          video_frame_rate_limit: 120,
          video_matrix_limit: 8294400,
        },
        polls: { max_options: 4, max_characters_per_option: 50, min_expiration: 300, max_expiration: 2629746 },
      },
      contact_account: contactAccount,
      rules: RULES,
    });
  });

  it('keeps Mastodon’s top-level key order', () => {
    expect(Object.keys(serializeInstanceV1(fixtureView))).toEqual([
      'uri', 'title', 'short_description', 'description', 'email', 'version', 'urls', 'stats',
      'thumbnail', 'languages', 'registrations', 'approval_required', 'invites_enabled',
      'configuration', 'contact_account', 'rules',
    ]);
  });

  it('closed registrations: registrations false, approval false', () => {
    const out = serializeInstanceV1(withView({ registrations: { ...fixtureView.registrations, mode: 'closed' } }));
    expect([out.registrations, out.approval_required]).toEqual([false, false]);
    expect(registrationsEnabled('closed')).toBe(false);
    expect(registrationsEnabled('approval')).toBe(true);
  });

  it('an empty extended description gives an empty description', () => {
    const out = serializeInstanceV1(withView({ extendedDescription: { markdown: '', updatedAt: null } }));
    expect(out.description).toBe('');
  });
});

describe('instance satellites', () => {
  it('serializeRules: ids as strings, hint, translations (empty object when none)', () => {
    expect(serializeRules(fixtureView.rules)).toEqual(RULES);
    expect(serializeRules([])).toEqual([]);
  });

  it('serializeExtendedDescription: updated_at as ISO 8601 and Markdown content', () => {
    expect(serializeExtendedDescription(fixtureView)).toEqual({
      updated_at: '2026-11-01T12:30:00.000Z',
      content: EXTENDED_HTML,
    });
  });

  it('serializeExtendedDescription: never written → updated_at null, content ""', () => {
    expect(serializeExtendedDescription({ extendedDescription: { markdown: '', updatedAt: null } })).toEqual({
      updated_at: null,
      content: '',
    });
  });

  it('serializePrivacyPolicy: the operator’s policy, %{domain} filled in', () => {
    expect(serializePrivacyPolicy(fixtureView)).toEqual({
      updated_at: '2026-10-07T00:00:00.000Z',
      content: '<h1>Privacy</h1>\n<p>roost.example stores <em>little</em>.</p>\n',
    });
  });

  it('serializePrivacyPolicy: Roost’s default policy when none is written', () => {
    for (const markdown of [null, '', '\n']) {
      const out = serializePrivacyPolicy({
        domain: 'roost.example',
        privacyPolicy: { markdown, updatedAt: new Date('2020-01-01T00:00:00Z') },
      });
      expect(out.updated_at).toBe(DEFAULT_PRIVACY_POLICY_UPDATED_AT.toISOString());
      expect(out.content.startsWith('<h1>Privacy policy</h1>\n<p>This policy describes what roost.example')).toBe(true);
      expect(out.content).not.toContain('%{domain}');
      expect(out.content).not.toMatch(/<script|<img|javascript:/i);
    }
  });

  it('serializeTermsOfService', () => {
    expect(
      serializeTermsOfService(
        { effectiveDate: '2026-04-15', effective: true, markdown: 'Use %{domain} *nicely*.', succeededBy: null },
        'roost.example',
      ),
    ).toEqual({
      effective_date: '2026-04-15',
      effective: true,
      content: '<p>Use roost.example <em>nicely</em>.</p>\n',
      succeeded_by: null,
    });
  });

  it('instanceActivityWeekStarts: Mondays 00:00 UTC, newest first, 12 weeks', () => {
    // Wednesday 27 November 2019, 15:00 UTC; its week began on Monday 25 November (1574640000,
    // the first week in Mastodon's documentation example).
    const weeks = instanceActivityWeekStarts(new Date('2019-11-27T15:00:00Z'));
    expect(weeks).toHaveLength(INSTANCE_ACTIVITY_WEEKS);
    expect(weeks.slice(0, 3)).toEqual([1574640000, 1574035200, 1573430400]);
    expect(weeks.at(-1)).toBe(1567987200);
    for (const w of weeks) expect(new Date(w * 1000).toISOString()).toMatch(/T00:00:00\.000Z$/);
    for (const w of weeks) expect(new Date(w * 1000).getUTCDay()).toBe(1);
    // A Monday at midnight and a Sunday just before midnight belong to the week starting that Monday.
    expect(instanceActivityWeekStarts(new Date('2019-11-25T00:00:00Z'), 1)).toEqual([1574640000]);
    expect(instanceActivityWeekStarts(new Date('2019-12-01T23:59:59Z'), 1)).toEqual([1574640000]);
  });

  it('serializeInstanceActivity: every value a string', () => {
    expect(
      serializeInstanceActivity([
        { weekStart: 1574640000, statuses: 37125, logins: 14239, registrations: 542 },
        { weekStart: 1574035200, statuses: 0, logins: 0, registrations: 0 },
      ]),
    ).toEqual([
      { week: '1574640000', statuses: '37125', logins: '14239', registrations: '542' },
      { week: '1574035200', statuses: '0', logins: '0', registrations: '0' },
    ]);
  });

  it('serializeInstancePeers: deduplicated, lower-cased, sorted', () => {
    expect(serializeInstancePeers(['mastodon.social', 'Example.COM', 'example.com', '', 'a.example'])).toEqual([
      'a.example',
      'example.com',
      'mastodon.social',
    ]);
    expect(serializeInstancePeers([])).toEqual([]);
  });

  it('serializeInstanceLanguages: every ISO 639-1 code plus the regional and 639-3 ones', () => {
    const langs = serializeInstanceLanguages();
    const codes = langs.map((l) => l.code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(langs).toContainEqual({ code: 'en', name: 'English' });
    expect(langs).toContainEqual({ code: 'de', name: 'German' });
    expect(langs).toContainEqual({ code: 'zh-TW', name: 'Chinese (Taiwan)' });
    expect(langs).toContainEqual({ code: 'tok', name: 'Toki Pona' });
    for (const l of langs) expect(Object.keys(l)).toEqual(['code', 'name']);
    // ISO 639-1 has 183 codes, plus the withdrawn-but-used "bh".
    expect(codes.filter((c) => /^[a-z]{2}$/.test(c))).toHaveLength(184);
    expect(codes.slice(0, 3)).toEqual(['aa', 'ab', 'ae']);
  });

  it('language helpers', () => {
    expect(isSupportedLanguage('EN')).toBe(true);
    expect(isSupportedLanguage('xx')).toBe(false);
    expect(languageName('zh-yue')).toBe('Cantonese');
    expect(normalizeLanguage('en-US')).toBe('en');
    expect(normalizeLanguage('pt_BR')).toBe('pt');
    expect(normalizeLanguage('ZH-tw')).toBe('zh-TW');
    expect(normalizeLanguage('tok')).toBe('tok');
    expect(normalizeLanguage('xx-YY')).toBeNull();
    expect(normalizeLanguage('')).toBeNull();
    expect(normalizeLanguage(null)).toBeNull();
  });

  it('serializeDomainBlocks: digest of the real domain, obfuscation, optional comment', () => {
    // Domains and digests from Mastodon's documentation example.
    expect(
      serializeDomainBlocks([
        { domain: 'birb.elfenban.de', severity: 'suspend', publicComment: 'Third-party bots', obfuscate: false },
        { domain: 'birdbots.leptonics.com', severity: 'silence', publicComment: null, obfuscate: true },
      ]),
    ).toEqual([
      {
        domain: 'birb.elfenban.de',
        digest: '5d2c6e02a0cced8fb05f32626437e3d23096480b47efbba659b6d9e80c85d280',
        severity: 'suspend',
        comment: 'Third-party bots',
      },
      {
        domain: 'birdbo**.********s.com',
        digest: 'ce019d8d32cce8e369ac4367f4dc232103e6f489fbdd247fb99f9c8a646078a4',
        severity: 'silence',
      },
    ]);
    expect(obfuscateDomain('dajiangyou.com')).toBe('daji******.com');
  });
});

// The OpenAPI description's `required` lists are stricter than real servers in places (e.g. it
// requires `updated_at` to be a string, while Mastodon sends null for a never-written extended
// description). Deviations Roost shares with Mastodon are asserted as such below.
describe('against the Mastodon OpenAPI schemas', () => {
  it('the checker is not vacuous: it reports a missing key, a wrong type and a stray key', () => {
    const { domain: _domain, ...out } = serializeInstanceV2(fixtureView);
    const broken = { ...out, title: 7, misspelt_key: true, contact: { email: 'a@b.c', account: { id: 1 } } };
    const errors = validate('Instance', broken);
    expect(errors).toContain("/: must have required property 'domain' {\"missingProperty\":\"domain\"}");
    expect(errors).toContain('/title: must be string {"type":"string"}');
    expect(errors.some((e) => e.startsWith('/contact/account'))).toBe(true);
    expect(unknownKeys('Instance', broken)).toContain('/misspelt_key');
  });

  it('v2 instance matches Instance, with no undeclared keys but configuration.vapid', () => {
    const out = serializeInstanceV2(fixtureView);
    expect(validate('Instance', out)).toEqual([]);
    // The generated description misses `configuration.vapid` (the documentation has a heading for
    // `configuration[vapid][public_key]` but none for the `configuration[vapid]` hash); Mastodon
    // 4.3+ sends it, as the documentation's example shows.
    expect(unknownKeys('Instance', out)).toEqual(['/configuration/vapid']);
  });

  it('v2 instance in every registrations mode and without a contact account', () => {
    for (const mode of ['open', 'approval', 'closed'] as const) {
      const out = serializeInstanceV2(
        withView({ registrations: { ...fixtureView.registrations, mode }, contact: { email: 'a@b.c', account: null } }),
      );
      expect(validate('Instance', out)).toEqual([]);
    }
  });

  it('v1 instance matches V1Instance, with no undeclared keys but urls.status', () => {
    const out = serializeInstanceV1(fixtureView);
    expect(validate('V1Instance', out)).toEqual([]);
    // Roost adds the operator's status page next to streaming_api (the mission asks for it).
    expect(unknownKeys('V1Instance', out)).toEqual(['/urls/status']);
  });

  it('rules, privacy policy and extended description match their components', () => {
    for (const rule of serializeRules(fixtureView.rules)) {
      expect(validate('Rule', rule)).toEqual([]);
      expect(unknownKeys('Rule', rule)).toEqual([]);
    }
    expect(validate('PrivacyPolicy', serializePrivacyPolicy(fixtureView))).toEqual([]);
    expect(validate('ExtendedDescription', serializeExtendedDescription(fixtureView))).toEqual([]);
  });

  it('known deviation shared with Mastodon: a never-written extended description has updated_at null', () => {
    const out = serializeExtendedDescription({ extendedDescription: { markdown: '', updatedAt: null } });
    expect(validate('ExtendedDescription', out)).toEqual(['/updated_at: must be string {"type":"string"}']);
  });
});
