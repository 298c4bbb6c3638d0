import { describe, it, expect } from 'vitest';
import pino from 'pino';
import { createAccessLogWriter } from '../../src/http/access-log.ts';

function capture(level: string) {
  const lines: string[] = [];
  const log = pino({ level, base: { app: 'roost' } }, { write: (s: string) => void lines.push(s) }).child({ module: 'http' });
  return { log, lines };
}

describe('access log writer', () => {
  it("writes pino's line format with the logger's bindings", () => {
    const { log, lines } = capture('info');
    const write = createAccessLogWriter(log);
    write('r-1', 'GET', '/api/v1/"x"', 200, 1.25, false);
    write('r-2', 'POST', '/inbox', 499, 3, true);
    expect(lines).toHaveLength(2);
    const [a, b] = lines.map((l) => JSON.parse(l));
    expect(typeof a.time).toBe('number');
    expect({ ...a, time: 0 }).toEqual({ level: 30, time: 0, app: 'roost', module: 'http', reqId: 'r-1', method: 'GET', path: '/api/v1/"x"', status: 200, ms: 1.25, msg: 'request' });
    expect(b.aborted).toBe(true);
    expect(lines[0].endsWith('\n')).toBe(true);
  });

  it('writes nothing when info is disabled', () => {
    const { log, lines } = capture('warn');
    createAccessLogWriter(log)('r', 'GET', '/', 200, 1, false);
    expect(lines).toEqual([]);
  });
});
