import { describe, it, expect } from 'vitest';
import { parseAcct } from '../../src/lib/acct.ts';

describe('parseAcct', () => {
  it('splits handles, with the local domain meaning local', () => {
    expect(parseAcct('alice', 'roost.example')).toEqual({ username: 'alice', domain: null });
    expect(parseAcct(' @alice ', 'roost.example')).toEqual({ username: 'alice', domain: null });
    expect(parseAcct('alice@Roost.Example', 'roost.example')).toEqual({ username: 'alice', domain: null });
    expect(parseAcct('@bob@other.example:8080', 'roost.example')).toEqual({ username: 'bob', domain: 'other.example:8080' });
  });
  it('refuses what is not a handle', () => {
    for (const text of ['', '@', 'a@b@c', 'two words', 'https://other.example/users/bob', 'alice@']) {
      expect(parseAcct(text, 'roost.example')).toBeNull();
    }
  });
});
