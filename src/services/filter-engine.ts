/**
 * The one filter engine (DESIGN.md principle 6), for timelines, notifications, streaming and push:
 * loadFilterSet reads an account's filters in force (one statement) and compiles them; the pure
 * matching (applyFilters, filterableFromStatusJson …) lives in src/lib/filter-engine.ts and is
 * re-exported here so callers import one module.
 */
import type { Services } from '../context.ts';
import { compileFilterSet, type FilterSet } from '../lib/filter-engine.ts';
import { loadActiveFiltersOf, loadFilters } from './reads/filters.ts';

export {
  applyFilters,
  compileFilterSet,
  filterableFromStatusJson,
  filterableText,
  htmlToText,
  keywordRegExp,
  type CompiledFilter,
  type FilterableStatus,
  type FilterableStatusJson,
  type FilterContext,
  type FilterOutcome,
  type FilterSet,
  type MastodonFilterResult,
} from '../lib/filter-engine.ts';

/** The account's filters in force now (services.clock), compiled: one statement. */
export async function loadFilterSet(services: Services, accountId: string): Promise<FilterSet> {
  return compileFilterSet(accountId, await loadFilters(services.db.sql, accountId, { activeAt: services.clock.now() }));
}

/** The filter sets of many accounts (those in force now): one statement. */
export async function loadFilterSets(services: Services, accountIds: readonly string[]): Promise<Map<string, FilterSet>> {
  const rows = await loadActiveFiltersOf(services.db.sql, accountIds, services.clock.now());
  return new Map([...rows].map(([id, r]) => [id, compileFilterSet(id, r)]));
}
