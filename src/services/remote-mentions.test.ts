import { describe, it, expect } from 'vitest';
import type { Services } from '../context.ts';
import { MAX_MENTION_LOOKUPS, resolveRemoteHandles, setRemoteAccountResolver } from './remote-mentions.ts';

function servicesWith(timeoutSeconds: number): Services {
  return { config: { federation: { mentionLookupTimeoutSeconds: timeoutSeconds } }, log: { debug: () => undefined } } as unknown as Services;
}

describe('resolveRemoteHandles', () => {
  it('gives null for every handle when no resolver is set (the CLI)', async () => {
    expect(await resolveRemoteHandles(servicesWith(1), [{ username: 'a', domain: 'x.example' }])).toEqual([null]);
  });

  it(`asks the resolver for the first ${MAX_MENTION_LOOKUPS} handles only, keeping positions`, async () => {
    const services = servicesWith(1);
    const asked: string[] = [];
    setRemoteAccountResolver(services, async (u, d) => {
      asked.push(`${u}@${d}`);
      return u === 'h1' ? { id: '101' } : null;
    });
    const handles = Array.from({ length: MAX_MENTION_LOOKUPS + 2 }, (_, i) => ({ username: `h${i}`, domain: 'x.example' }));
    const ids = await resolveRemoteHandles(services, handles);
    expect(asked).toEqual(handles.slice(0, MAX_MENTION_LOOKUPS).map((h) => `${h.username}@x.example`));
    expect(ids).toEqual(handles.map((h) => (h.username === 'h1' ? '101' : null)));
  });

  it('abandons a lookup that does not finish in time (aborting its signal) and one that throws', async () => {
    const services = servicesWith(1);
    let signal: AbortSignal | undefined;
    setRemoteAccountResolver(services, async (u, _d, s) => {
      if (u === 'boom') throw new Error('refused');
      signal = s;
      return new Promise(() => undefined); // never settles
    });
    const ids = await resolveRemoteHandles(services, [
      { username: 'stuck', domain: 'x.example' },
      { username: 'boom', domain: 'x.example' },
    ]);
    expect(ids).toEqual([null, null]);
    expect(signal?.aborted).toBe(true);
  });
});
