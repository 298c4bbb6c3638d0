import { AccountSchema } from './account.entity.ts';
import { AccountKeySchema } from './account-key.entity.ts';
import { UserSchema } from './user.entity.ts';
import { UserRoleSchema } from './user-role.entity.ts';
import { FollowSchema } from './follow.entity.ts';
import { StatusSchema, StatusStatsSchema } from './status.entity.ts';
import { PollSchema } from './poll.entity.ts';
import { ScheduledStatusSchema } from './scheduled-status.entity.ts';
import { OAuthApplicationSchema, OAuthAccessGrantSchema, OAuthAccessTokenSchema } from './oauth.entity.ts';

export * from './account.entity.ts';
export * from './account-key.entity.ts';
export * from './user.entity.ts';
export * from './user-role.entity.ts';
export * from './follow.entity.ts';
export * from './oauth.entity.ts';
export * from './status.entity.ts';
export * from './poll.entity.ts';
export * from './scheduled-status.entity.ts';

export const ENTITIES = [AccountSchema, AccountKeySchema, UserSchema, UserRoleSchema, FollowSchema, OAuthApplicationSchema, OAuthAccessGrantSchema, OAuthAccessTokenSchema, StatusSchema, StatusStatsSchema, PollSchema, ScheduledStatusSchema];
