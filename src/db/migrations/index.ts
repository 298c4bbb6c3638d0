import { Migration20261122000000_core } from './Migration20261122000000_core.ts';
import { Migration20261122000100_jobs } from './Migration20261122000100_jobs.ts';
import { Migration20261122010000_oauth } from './Migration20261122010000_oauth.ts';
import { Migration20261122020000_oauth_more } from './Migration20261122020000_oauth_more.ts';
import { Migration20261122030000_profiles } from './Migration20261122030000_profiles.ts';
import { Migration20261122040000_relationships } from './Migration20261122040000_relationships.ts';
import { Migration20261122045000_suggestions_moves } from './Migration20261122045000_suggestions_moves.ts';
import { Migration20261122050000_notes_pins_domain_blocks } from './Migration20261122050000_notes_pins_domain_blocks.ts';
import { Migration20261123000000_outbox } from './Migration20261123000000_outbox.ts';
import { Migration20261123010000_sanitize_remote_accounts } from './Migration20261123010000_sanitize_remote_accounts.ts';
import { Migration20261123060000_account_stats } from './Migration20261123060000_account_stats.ts';
import { Migration20261123090000_instance_settings } from './Migration20261123090000_instance_settings.ts';
import { Migration20261123160000_configured_texts } from './Migration20261123160000_configured_texts.ts';
import { Migration20261123170000_legacy_effect_jobs } from './Migration20261123170000_legacy_effect_jobs.ts';
import { Migration20261123180000_statuses } from './Migration20261123180000_statuses.ts';
import { Migration20261123190000_media_attachments } from './Migration20261123190000_media_attachments.ts';
import { Migration20261123191000_polls } from './Migration20261123191000_polls.ts';
import { Migration20261123193000_status_edits_cards_conversations } from './Migration20261123193000_status_edits_cards_conversations.ts';
import { Migration20261123192000_home_feeds } from './Migration20261123192000_home_feeds.ts';
import { Migration20261123195000_instance_domain_policy } from './Migration20261123195000_instance_domain_policy.ts';
import { Migration20261123196000_deliveries } from './Migration20261123196000_deliveries.ts';
import { Migration20261126203000_account_conversations } from './Migration20261126203000_account_conversations.ts';
import { Migration20261126202000_lists_markers } from './Migration20261126202000_lists_markers.ts';
import { Migration20261126204000_scheduled_statuses } from './Migration20261126204000_scheduled_statuses.ts';
import { Migration20261127002000_streaming } from './Migration20261127002000_streaming.ts';
import { Migration20261126206000_instance_actor } from './Migration20261126206000_instance_actor.ts';
import { Migration20261127001000_notifications } from './Migration20261127001000_notifications.ts';
import { Migration20261127003000_push } from './Migration20261127003000_push.ts';
import { Migration20261127004000_severed_relationships } from './Migration20261127004000_severed_relationships.ts';
import { Migration20261127005000_notifications_surfaced } from './Migration20261127005000_notifications_surfaced.ts';
import { Migration20261127040000_delivery_checkpoints } from './Migration20261127040000_delivery_checkpoints.ts';
import { Migration20261127041000_untrusted_status_counts } from './Migration20261127041000_untrusted_status_counts.ts';
import { Migration20261127090000_account_domain_blocks_domain } from './Migration20261127090000_account_domain_blocks_domain.ts';
import { Migration20261128010000_streaming_source_key } from './Migration20261128010000_streaming_source_key.ts';
import { Migration20261128070000_notification_requests } from './Migration20261128070000_notification_requests.ts';
import { Migration20261128110000_poll_voters_unknown } from './Migration20261128110000_poll_voters_unknown.ts';
import { Migration20261128180000_webhooks_blocklists } from './Migration20261128180000_webhooks_blocklists.ts';
import { Migration20261128120000_admin_action_logs } from './Migration20261128120000_admin_action_logs.ts';
import { Migration20261128210000_trends } from './Migration20261128210000_trends.ts';
import { Migration20261128150000_admin_accounts } from './Migration20261128150000_admin_accounts.ts';
import { Migration20261128160000_report_moderation } from './Migration20261128160000_report_moderation.ts';
import { Migration20261128170000_mail_and_sign_up_blocks } from './Migration20261128170000_mail_and_sign_up_blocks.ts';
import { Migration20261128140000_quotes } from './Migration20261128140000_quotes.ts';
import { Migration20261128200000_thread_refreshes } from './Migration20261128200000_thread_refreshes.ts';
import { Migration20261128190000_status_search } from './Migration20261128190000_status_search.ts';
import { Migration20261126205000_emojis_tags } from './Migration20261126205000_emojis_tags.ts';
import { Migration20261127000000_filters } from './Migration20261127000000_filters.ts';

/** Every migration, in order. Committed migrations never change; add a new one instead. */
export const MIGRATIONS = [
  Migration20261122000000_core,
  Migration20261122000100_jobs,
  Migration20261122010000_oauth,
  Migration20261122020000_oauth_more,
  Migration20261122030000_profiles,
  Migration20261122040000_relationships,
  Migration20261122045000_suggestions_moves,
  Migration20261122050000_notes_pins_domain_blocks,
  Migration20261123000000_outbox,
  Migration20261123010000_sanitize_remote_accounts,
  Migration20261123060000_account_stats,
  Migration20261123090000_instance_settings,
  Migration20261123160000_configured_texts,
  Migration20261123170000_legacy_effect_jobs,
  Migration20261123180000_statuses,
  Migration20261123190000_media_attachments,
  Migration20261123191000_polls,
  Migration20261123193000_status_edits_cards_conversations,
  Migration20261123192000_home_feeds,
  Migration20261123195000_instance_domain_policy,
  Migration20261123196000_deliveries,
  Migration20261126202000_lists_markers,
  Migration20261126203000_account_conversations,
  Migration20261126204000_scheduled_statuses,
  Migration20261126205000_emojis_tags,
  Migration20261126206000_instance_actor,
  Migration20261127000000_filters,
  Migration20261127001000_notifications,
  Migration20261127002000_streaming,
  Migration20261127003000_push,
  Migration20261127004000_severed_relationships,
  Migration20261127005000_notifications_surfaced,
  Migration20261127040000_delivery_checkpoints,
  Migration20261127041000_untrusted_status_counts,
  Migration20261127090000_account_domain_blocks_domain,
  Migration20261128010000_streaming_source_key,
  Migration20261128070000_notification_requests,
  Migration20261128110000_poll_voters_unknown,
  Migration20261128120000_admin_action_logs,
  Migration20261128140000_quotes,
  Migration20261128150000_admin_accounts,
  Migration20261128160000_report_moderation,
  Migration20261128170000_mail_and_sign_up_blocks,
  Migration20261128180000_webhooks_blocklists,
  Migration20261128190000_status_search,
  Migration20261128200000_thread_refreshes,
  Migration20261128210000_trends,
];
