/**
 * Logs: pretty (time, level name, message) for a person at a terminal, JSON otherwise or when
 * ROOST_LOG_FORMAT says so; and each request logged once, with its request id, through the real
 * server (Fedify's own per-request line is not repeated).
 */
import { describe, it, expect, afterAll } from 'vitest';
import { loadConfig, ConfigError } from '../config/index.ts';
import { prettyLine, resolveLogFormat } from '../src/log.ts';
import { startTestRoost, type TestRoost } from './helpers/roost.ts';

let roost: TestRoost | undefined;
afterAll(async () => roost?.close());

describe('log format', () => {
  it('is pretty on a terminal and JSON otherwise, unless ROOST_LOG_FORMAT says', () => {
    expect(loadConfig({ env: {} }).logFormat).toBeNull();
    expect(resolveLogFormat(null, true)).toBe('pretty');
    expect(resolveLogFormat(null, false)).toBe('json');
    expect(resolveLogFormat(loadConfig({ env: { ROOST_LOG_FORMAT: 'json' } }).logFormat, true)).toBe('json');
    expect(resolveLogFormat(loadConfig({ env: { ROOST_LOG_FORMAT: 'pretty' } }).logFormat, false)).toBe('pretty');
    expect(() => loadConfig({ env: { ROOST_LOG_FORMAT: 'xml' } })).toThrow(
      new ConfigError('Invalid configuration ROOST_LOG_FORMAT: must be one of json, pretty, got "xml"'),
    );
  });

  it('a pretty line has the time, the level name, the module and the message', () => {
    const time = new Date(2026, 10, 23, 16, 4, 5, 123).getTime(); // local time, as printed
    const line = prettyLine(false)(
      JSON.stringify({ level: 40, time, app: 'roost', module: 'http', reqId: 'r1', status: 404, msg: 'request' }) + '\n',
    );
    expect(line).toBe('[16:04:05.123] WARN: (http) request {"reqId":"r1","status":404}\n');
  });
});

describe('the access log through the server', () => {
  it('logs a 404 once, as the request line with its id, and no Fedify warning', async () => {
    const lines: string[] = [];
    roost = await startTestRoost({ logLevel: 'info' }, { logDestination: { write: (l: string) => void lines.push(l) } });
    const res = await fetch(roost.at('/no-such-page'), { headers: { accept: 'application/activity+json' } });
    expect(res.status).toBe(404);
    const reqId = res.headers.get('x-request-id');
    await new Promise((r) => setTimeout(r, 50));
    const about = lines.map((l) => JSON.parse(l)).filter((l) => JSON.stringify(l).includes('/no-such-page'));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatchObject({ level: 30, msg: 'request', method: 'GET', path: '/no-such-page', status: 404, reqId });
  });
});
