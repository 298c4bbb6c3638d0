import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, isEventType, upcast, type EventOf } from './catalogue.ts';
import { CONSUMERS, CONSUMER_NAMES, listenersOf } from './consumers.ts';
import { needsEventJob, outboxCtes } from './outbox.ts';

describe('the consumer declarations', () => {
  it('name only types of the catalogue, each consumer at least one', () => {
    for (const name of CONSUMER_NAMES) {
      const handles = CONSUMERS[name].handles as readonly string[];
      expect(handles.length, name).toBeGreaterThan(0);
      expect(handles.filter((t) => !isEventType(t)), name).toEqual([]);
      expect(new Set(handles).size, `${name} lists a type twice`).toBe(handles.length);
    }
    expect(isEventType('status.created')).toBe(true);
    expect(isEventType('status.exploded')).toBe(false);
    expect(EVENT_TYPES).toContain('relationships.severed');
  });

  it('run a consumer only after the ones it reads', () => {
    for (const name of CONSUMER_NAMES) {
      for (const dep of (CONSUMERS[name] as { after?: readonly string[] }).after ?? []) {
        expect(CONSUMER_NAMES.indexOf(dep as never), `${name} after ${dep}`).toBeLessThan(CONSUMER_NAMES.indexOf(name));
      }
    }
  });

  it('route each fact to the consumers that act on it', () => {
    const created: EventOf<'status.created'> = { type: 'status.created', statusId: '1', accountId: '2', local: true, visibility: 'public', inReplyToId: null };
    expect(listenersOf(created)).toEqual(['federate', 'home-feeds', 'streaming', 'notifications', 'trends', 'webhooks']);
    // Only public statuses naming hashtags are trend uses.
    expect(listenersOf({ ...created, tagged: false })).toEqual(['federate', 'home-feeds', 'streaming', 'notifications', 'webhooks']);
    expect(listenersOf({ ...created, visibility: 'unlisted' })).toEqual(['federate', 'home-feeds', 'streaming', 'notifications', 'webhooks']);
    expect(listenersOf({ ...created, visibility: 'direct' })).toEqual(['federate', 'home-feeds', 'conversations', 'streaming', 'notifications', 'webhooks']);
    // Admin webhooks speak of local statuses only.
    expect(listenersOf({ ...created, local: false })).toEqual(['federate', 'home-feeds', 'streaming', 'notifications', 'trends']);
    expect(listenersOf({ type: 'report.updated', reportId: '3' })).toEqual(['webhooks']);
    expect(listenersOf({ type: 'filters.changed', accountId: '2' })).toEqual(['streaming']);
    expect(listenersOf({ type: 'follow.updated', followerId: '1', targetId: '2', reblogs: true, notify: false, languages: null })).toEqual([]);
    // A vote concerns another server only when a local account voted on a remote poll.
    const vote: EventOf<'poll.voted'> = { type: 'poll.voted', pollId: '1', voterId: '2', choices: [0], local: true, pollLocal: false };
    expect(listenersOf(vote)).toEqual(['federate']);
    expect(listenersOf({ ...vote, pollLocal: true })).toEqual([]);
    expect(listenersOf({ ...vote, local: false })).toEqual([]);
    expect(listenersOf({ ...vote, pollLocal: null })).toEqual(['federate']);
    expect(needsEventJob({ ...vote, pollLocal: true })).toBe(false);
    expect(needsEventJob(created)).toBe(true);
  });
});

describe('upcast', () => {
  it('fills what older payloads lack, from the outbox row where it can and null where it cannot', () => {
    expect(upcast({ type: 'status.created', accountId: '2', visibility: 'public', inReplyToId: null }, '77')).toEqual({
      type: 'status.created', statusId: '77', accountId: '2', visibility: 'public', inReplyToId: null, local: null,
    });
    expect(upcast({ type: 'status.deleted', statusId: '5', accountId: '2' }, '77')).toEqual({
      type: 'status.deleted', statusId: '5', accountId: '2', local: null, reblogIds: [],
    });
    expect(upcast({ type: 'poll.voted', pollId: '1', voterId: '2', choices: [1], local: true }, '1')).toEqual({
      type: 'poll.voted', pollId: '1', voterId: '2', choices: [1], local: true, pollLocal: null,
    });
    expect(upcast({ type: 'poll.updated' }, '9')).toEqual({ type: 'poll.updated', pollId: '9' });
    expect(upcast({ type: 'report.created', accountId: '1', targetAccountId: '2' }, '4')).toMatchObject({ reportId: '4' });
  });

  it('keeps today’s payloads as they are and drops types the catalogue no longer has', () => {
    const today = { type: 'status.created', statusId: '5', accountId: '2', local: false, visibility: 'direct', inReplyToId: '3', pollId: '8' };
    expect(upcast(today, '5')).toEqual(today);
    expect(upcast({ type: 'follow.requested', followerId: '1', targetId: '2' }, '3')).toEqual({ type: 'follow.requested', followerId: '1', targetId: '2' });
    expect(upcast({ type: 'widget.spun' }, '1')).toBeNull();
  });
});

describe('the outbox write', () => {
  const base = { actorKind: 'poll', actorId: '1', actorVersion: 2, origin: 'client' as const, now: new Date('2026-11-28T00:00:00Z') };
  const localVote: EventOf<'poll.voted'> = { type: 'poll.voted', pollId: '1', voterId: '2', choices: [0], local: true, pollLocal: true };
  const closed: EventOf<'poll.closed'> = { type: 'poll.closed', pollId: '1', voterIds: ['2'], authorId: '3' };

  it('queues no job and wakes nobody when no consumer listens', () => {
    const w = outboxCtes({ ...base, events: [localVote] }, 1, 'true');
    expect(w.ctes).not.toContain('insert into jobs');
    expect(w.notify).toBe('null');
  });

  it('queues jobs only for the facts some consumer listens to', () => {
    const w = outboxCtes({ ...base, events: [localVote, closed] }, 1, 'true');
    expect(w.ctes).toContain('insert into jobs');
    expect(w.ctes).toContain('from ev where seq in (1) order by seq');
    const all = outboxCtes({ ...base, events: [closed, closed] }, 1, 'true');
    expect(all.ctes).toContain('from ev order by seq');
  });
});
