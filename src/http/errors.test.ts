import { describe, expect, it } from 'vitest';
import { isUnavailableError, unavailableError } from './errors.ts';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isUnavailableError', () => {
  it('recognises a database that cannot be reached, however wrapped', () => {
    for (const e of [
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P02'),
      coded('57P03', 'the database system is starting up'),
      coded('08006'),
      coded('08001'),
      coded('53300', 'sorry, too many clients already'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Client has encountered a connection error and is not queryable'),
      new Error('wrapped', { cause: coded('ECONNREFUSED') }),
      Object.assign(new Error('driver'), { previous: coded('57P01') }),
      new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], 'all addresses refused'),
    ]) {
      expect([e.message, isUnavailableError(e)]).toEqual([e.message, true]);
    }
  });

  it('leaves every other failure alone', () => {
    for (const e of [
      new Error('boom'),
      coded('23505', 'duplicate key value violates unique constraint'),
      coded('22P02', 'invalid input syntax for type bigint'),
      coded('40001'),
      coded('ENOENT'),
      coded('ENOTFOUND'),
      null,
      'ECONNREFUSED',
    ]) {
      expect(isUnavailableError(e)).toBe(false);
    }
  });

  it("answers 503 in Mastodon's shape with Retry-After", async () => {
    const res = unavailableError().toResponse();
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([
      503,
      '5',
      { error: 'There was a temporary problem serving your request, please try again' },
    ]);
  });
});
