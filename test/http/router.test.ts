import { describe, expect, it } from 'vitest';
import { json, Router, type Handler } from '../../src/http/index.ts';

const h = (name: string): Handler => () => json({ name });

function matchName(r: Router, method: string, path: string): unknown {
  const m = r.match(method, path);
  if (m === null) return null;
  if ('allowed' in m) return { allowed: m.allowed };
  return { pattern: m.pattern, params: m.params };
}

describe('Router', () => {
  const r = new Router()
    .get('/api/v1/instance', h('instance'))
    .get('/api/v1/accounts/:id', h('account'))
    .post('/api/v1/accounts/:id/follow', h('follow'))
    .get('/api/v1/accounts/relationships', h('relationships'))
    .update('/api/v1/accounts/update_credentials', h('update'))
    .delete('/api/v1/statuses/:id', h('delete'))
    .get('/@:username', h('profile'))
    .get('/@:username/:status', h('profile-status'))
    .get('/system/*', h('files'))
    .get('/media/*rest', h('media'));

  it('matches static routes, ignoring one trailing slash', () => {
    expect(matchName(r, 'GET', '/api/v1/instance')).toEqual({ pattern: '/api/v1/instance', params: {} });
    expect(matchName(r, 'GET', '/api/v1/instance/')).toEqual({ pattern: '/api/v1/instance', params: {} });
  });

  it('captures and URL-decodes params', () => {
    expect(matchName(r, 'GET', '/api/v1/accounts/109%2B1')).toEqual({ pattern: '/api/v1/accounts/:id', params: { id: '109+1' } });
    expect(matchName(r, 'POST', '/api/v1/accounts/42/follow')).toEqual({ pattern: '/api/v1/accounts/:id/follow', params: { id: '42' } });
  });

  it('prefers a static segment over a param, and backtracks by method', () => {
    expect(matchName(r, 'GET', '/api/v1/accounts/relationships')).toEqual({ pattern: '/api/v1/accounts/relationships', params: {} });
    // No GET route for .../follow → 405 listing POST
    expect(matchName(r, 'GET', '/api/v1/accounts/42/follow')).toEqual({ allowed: ['POST'] });
  });

  it('registers PUT and PATCH with update()', () => {
    expect(matchName(r, 'PUT', '/api/v1/accounts/update_credentials')).toMatchObject({ pattern: '/api/v1/accounts/update_credentials' });
    expect(matchName(r, 'PATCH', '/api/v1/accounts/update_credentials')).toMatchObject({ pattern: '/api/v1/accounts/update_credentials' });
    // GET matches too, through /api/v1/accounts/:id
    expect(matchName(r, 'POST', '/api/v1/accounts/update_credentials')).toEqual({ allowed: ['PUT', 'PATCH', 'GET', 'HEAD'] });
    expect(matchName(r, 'POST', '/api/v1/instance/')).toEqual({ allowed: ['GET', 'HEAD'] });
  });

  it('serves HEAD with GET routes and lists HEAD in allowed', () => {
    expect(matchName(r, 'HEAD', '/api/v1/instance')).toEqual({ pattern: '/api/v1/instance', params: {} });
    expect(matchName(r, 'POST', '/api/v1/instance')).toEqual({ allowed: ['GET', 'HEAD'] });
  });

  it('supports a literal prefix before a param in a segment', () => {
    expect(matchName(r, 'GET', '/@alice')).toEqual({ pattern: '/@:username', params: { username: 'alice' } });
    expect(matchName(r, 'GET', '/@alice/123')).toEqual({ pattern: '/@:username/:status', params: { username: 'alice', status: '123' } });
    expect(matchName(r, 'GET', '/@')).toBeNull();
  });

  it('supports trailing wildcards, anonymous and named', () => {
    expect(matchName(r, 'GET', '/system/a/b/c.png')).toEqual({ pattern: '/system/*', params: { '*': 'a/b/c.png' } });
    expect(matchName(r, 'GET', '/media/x/y')).toEqual({ pattern: '/media/*rest', params: { rest: 'x/y' } });
    expect(matchName(r, 'GET', '/system')).toBeNull();
  });

  it('returns null for unknown paths and empty param segments', () => {
    expect(matchName(r, 'GET', '/nope')).toBeNull();
    expect(matchName(r, 'GET', '/api/v1/accounts//follow')).toBeNull();
  });

  it('refuses duplicate routes and bad patterns', () => {
    expect(() => new Router().get('/a', h('a')).get('/a', h('b'))).toThrowError('duplicate route GET /a');
    expect(() => new Router().get('a', h('a'))).toThrowError("route pattern must start with '/'");
    expect(() => new Router().get('/a/*/b', h('a'))).toThrowError('wildcard must be the last segment');
  });

  it('lists its routes', () => {
    expect(new Router().get('/a', h('a')).update('/b', h('b')).routes()).toEqual([
      { method: 'GET', pattern: '/a' },
      { method: 'PUT', pattern: '/b' },
      { method: 'PATCH', pattern: '/b' },
    ]);
  });
});
