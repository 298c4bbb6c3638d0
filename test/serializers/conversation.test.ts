/**
 * The Conversation serializer on fixtures, to the exact JSON: the id as given (a string), the other
 * participants in order (unknown ones left out), the viewer alone for a note to oneself, and
 * last_status with the viewer's flags, or null when none is left to see.
 */
import { describe, it, expect } from 'vitest';
import type { Account } from '../../src/db/entities/index.ts';
import { serializeAccount, type AccountView } from '../../src/serializers/account.ts';
import { serializeConversation, type ConversationView } from '../../src/serializers/conversation.ts';
import { serializeStatus, type StatusRow, type StatusView } from '../../src/serializers/status.ts';

const BASE = 'https://roost.example';

function account(id: string, username: string, domain: string | null = null): Account {
  const home = domain ? `https://${domain}` : BASE;
  return {
    id, username, domain, uri: `${home}/users/${username}`, url: `${home}/@${username}`, displayName: username, note: '', fields: [],
    avatarUrl: null, headerUrl: null, locked: false, actorType: 'Person', discoverable: true, indexable: true, hideCollections: null,
    createdAt: new Date('2026-01-02T03:04:05Z'), suspendedAt: null, silencedAt: null, movedToAccountId: null,
  } as unknown as Account;
}

const alice = account('100', 'alice');
const bob = account('200', 'bob', 'other.example');
const carol = account('300', 'carol');
const accountView: AccountView = { baseUrl: BASE, localDomain: 'roost.example' };

const dm: StatusRow = {
  id: '1000', accountId: '200', uri: 'https://other.example/users/bob/statuses/1', url: null, text: '', content: '<p>psst</p>',
  spoilerText: '', visibility: 'direct', sensitive: false, language: null, inReplyToId: null, inReplyToAccountId: null,
  reblogOfId: null, createdAt: new Date('2026-11-26T10:00:00Z'), editedAt: null, application: null,
  counts: { replies: 0, reblogs: 0, favourites: 0 }, card: null,
};

const accounts = new Map([['100', alice], ['200', bob], ['300', carol]]);
const statusView: StatusView = {
  baseUrl: BASE, viewerId: '100', accounts, accountView, mentions: new Map([['1000', [{ id: '100', username: 'alice', domain: null, url: `${BASE}/@alice` }]]]),
  tags: new Map(), flags: new Map([['1000', { favourited: false, reblogged: false, bookmarked: true, pinned: false, muted: false }]]),
};
const statuses = new Map([['1000', dm]]);
const view: ConversationView = { accounts, accountView, statuses, statusView };

describe('serializeConversation', () => {
  it('renders the other participants and the last status with the viewer flags', () => {
    const json = serializeConversation({ id: '7', unread: true, participantIds: ['200', '300', '999'], viewerId: '100', lastStatusId: '1000' }, view);
    expect(json).toEqual({
      id: '7',
      unread: true,
      accounts: [serializeAccount(bob, accountView), serializeAccount(carol, accountView)],
      last_status: serializeStatus(dm, statuses, statusView),
    });
    expect(json.accounts.map((a) => a.acct)).toEqual(['bob@other.example', 'carol']);
    expect(json.last_status).toMatchObject({ id: '1000', visibility: 'direct', bookmarked: true, account: { acct: 'bob@other.example' } });
  });

  it('shows the viewer alone for a note to oneself, and null when no status is left', () => {
    expect(serializeConversation({ id: '8', unread: false, participantIds: [], viewerId: '100', lastStatusId: null }, view)).toEqual({
      id: '8',
      unread: false,
      accounts: [serializeAccount(alice, accountView)],
      last_status: null,
    });
  });
});
