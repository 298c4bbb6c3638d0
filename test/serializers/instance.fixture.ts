/**
 * A named instance view for serializer tests: a small server with approval sign-ups, two rules
 * (one translated), a contact account shaped like the account serializer's output.
 */
import {
  DEFAULT_LIMITS,
  DEFAULT_TIMELINES_ACCESS,
  type InstanceView,
} from '../../src/serializers/instance.ts';

export const contactAccount = {
  id: '109348283412040123',
  username: 'admin',
  acct: 'admin',
  display_name: 'Roost Admin',
  locked: false,
  bot: false,
  discoverable: true,
  indexable: false,
  group: false,
  created_at: '2026-01-05T00:00:00.000Z',
  note: '<p>Runs this server.</p>',
  url: 'https://roost.example/@admin',
  uri: 'https://roost.example/users/admin',
  avatar: 'https://roost.example/avatars/original/missing.png',
  avatar_static: 'https://roost.example/avatars/original/missing.png',
  header: 'https://roost.example/headers/original/missing.png',
  header_static: 'https://roost.example/headers/original/missing.png',
  followers_count: 12,
  following_count: 3,
  statuses_count: 40,
  last_status_at: '2026-11-20',
  hide_collections: false,
  noindex: false,
  emojis: [],
  roles: [],
  fields: [],
};

export type ContactAccount = typeof contactAccount;

export const fixtureView: InstanceView<ContactAccount> = {
  domain: 'roost.example',
  baseUrl: 'https://roost.example',
  streamingUrl: 'wss://roost.example',
  softwareVersion: '0.1.0',
  sourceUrl: 'https://git.example/roost/roost',
  title: 'Roost Example',
  shortDescription: 'A small Roost server for tests & examples.',
  extendedDescription: {
    markdown: '## About\n\nBe **kind**. See [our rules](https://roost.example/about).',
    updatedAt: new Date('2026-11-01T12:30:00.000Z'),
  },
  privacyPolicy: {
    markdown: '# Privacy\n\n%{domain} stores *little*.',
    updatedAt: new Date('2026-10-07T00:00:00.000Z'),
  },
  contact: { email: 'staff@roost.example', account: contactAccount },
  languages: ['en', 'de'],
  rules: [
    { id: '1', text: 'Be kind.', hint: 'No harassment, no dogpiling.' },
    {
      id: '2',
      text: 'Mark sensitive media.',
      hint: '',
      translations: { de: { text: 'Sensible Medien markieren.', hint: '' } },
    },
  ],
  registrations: {
    mode: 'approval',
    closedMessageMarkdown: 'Sign-ups are **paused**.',
    reasonRequired: true,
    minAge: 16,
    url: null,
    invitesEnabled: false,
  },
  urls: {
    status: 'https://status.roost.example',
    about: 'https://roost.example/about',
    privacyPolicy: 'https://roost.example/privacy-policy',
    termsOfService: null,
  },
  vapidPublicKey: 'BCk-QqERU0q-CfYZjcuB6lnyyOYfJ2AifKqfeGIm7Z-HiTU5T9eTG5GxVA0_OH5mMlI4UkkDTpaZwozy0TzdZ2M=',
  translationEnabled: false,
  limitedFederation: false,
  timelinesAccess: DEFAULT_TIMELINES_ACCESS,
  limits: DEFAULT_LIMITS,
  thumbnail: {
    url: 'https://roost.example/thumbnail.png',
    url2x: 'https://roost.example/thumbnail@2x.png',
    blurhash: 'UaHc==tPN19c12obWVoLM_Irt3-mI=oMoMWV',
    description: 'A bird on a branch at dusk.',
  },
  icons: [
    { src: 'https://roost.example/icon-48.png', size: '48x48' },
    { src: 'https://roost.example/icon-192.png', size: '192x192' },
  ],
  stats: { userCount: 42, statusCount: 1234, domainCount: 17, activeMonth: 9 },
};

/** What Roost accepts and advertises: Mastodon 4.3's types less HEIC/HEIF (config/index.ts ROOST_SUPPORTED_MIME_TYPES). */
export const MIME_TYPES = [
  'image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/avif',
  'video/webm', 'video/mp4', 'video/quicktime', 'video/ogg',
  'audio/wave', 'audio/wav', 'audio/x-wav', 'audio/x-pn-wave', 'audio/vnd.wave', 'audio/ogg', 'audio/vorbis', 'audio/mpeg',
  'audio/mp3', 'audio/webm', 'audio/flac', 'audio/aac', 'audio/m4a', 'audio/x-m4a', 'audio/mp4', 'audio/3gpp',
  'video/x-ms-asf',
];
