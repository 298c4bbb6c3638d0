/**
 * Authentication on the read path: one statement for token → user → account, then a short cache
 * per instance that a revoke here empties at once.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { capturedStatements, startTestRoost, type TestRoost } from '../helpers/roost.ts';
import { apiRequest, createTestUser } from '../helpers/auth.ts';
import { forgetViewer } from '../../src/services/reads/viewer.ts';
import { revokeToken } from '../../src/services/tokens.ts';
import { createApplication } from '../../src/services/oauth.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';

let roost: TestRoost;
beforeAll(async () => {
  roost = await startTestRoost();
});
afterAll(async () => roost?.close());

const statements = (fn: () => Promise<unknown>) => capturedStatements(roost, fn, 40, { viewer: true });

describe('authentication', () => {
  it('is one statement, then none while cached; verify_credentials adds one', async () => {
    const me = await createTestUser(roost, 'viewer1');
    expect((await me.api('/api/v1/accounts/verify_credentials')).status).toBe(200); // the day's first use is recorded
    forgetViewer(roost.services);
    const cold = await statements(() => me.api('/api/v1/accounts/verify_credentials'));
    expect(cold.length).toBe(2);
    expect(cold[0]).toMatch(/^select t\.id::text as t_id/);
    const warm = await statements(() => me.api('/api/v1/accounts/verify_credentials'));
    expect(warm.length).toBe(1);
  });

  it('forgets a revoked token at once', async () => {
    const user = await createTestUser(roost, 'viewer2');
    const app = await createApplication(roost.services, { name: 'x', redirectUris: ['urn:ietf:wg:oauth:2.0:oob'], scopes: 'read', website: undefined });
    const { token } = await issueAccessToken(roost.services, { applicationId: app.id, userId: user.user.id, scopes: ['read'] });
    expect((await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token })).status).toBe(200);
    expect(await revokeToken(roost.services, token, app.id)).toBe('revoked');
    expect(await apiRequest(roost, '/api/v1/accounts/verify_credentials', { token })).toMatchObject({ status: 401, body: { error: 'The access token is invalid' } });
  });
});
