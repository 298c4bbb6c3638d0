/**
 * Test shortcuts for authenticated requests: a local account with a user, and a bearer token for
 * it with the scopes asked for (issued through the same service the OAuth endpoints use).
 */
import { createLocalAccount, type CreateLocalAccountInput } from '../../src/services/accounts.ts';
import { issueAccessToken } from '../../src/services/tokens.ts';
import type { Account, User } from '../../src/db/entities/index.ts';
import type { TestRoost } from './roost.ts';

export interface TestUser {
  account: Account;
  user: User;
  password: string;
  token: string;
  /** fetch() on the instance with the bearer token and JSON handling. */
  api(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any }>;
}

export async function createTestUser(
  roost: TestRoost,
  username: string,
  opts: { scopes?: string[] } & Partial<CreateLocalAccountInput> = {},
): Promise<TestUser> {
  const { scopes = ['read', 'write', 'follow', 'push'], ...input } = opts;
  const created = await createLocalAccount(roost.services, { username, email: `${username}@example.test`, confirmed: true, ...input });
  const { token } = await issueAccessToken(roost.services, { applicationId: null, userId: created.user.id, scopes });
  return {
    ...created,
    token,
    api: (path, init = {}) => apiRequest(roost, path, { ...init, token }),
  };
}

export async function apiRequest(
  roost: TestRoost,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; token?: string } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: FormData | URLSearchParams | string | undefined;
  if (init.body !== undefined) {
    if (init.body instanceof FormData || init.body instanceof URLSearchParams) body = init.body;
    else {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(init.body);
    }
  }
  const res = await fetch(roost.at(path), { method: init.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The Relationship of account `id` as `viewer` sees it (GET /api/v1/accounts/relationships). */
export async function relationshipOf(viewer: TestUser, id: string): Promise<any> {
  return (await viewer.api(`/api/v1/accounts/relationships?id[]=${id}`)).body[0];
}
