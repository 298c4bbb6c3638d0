/**
 * The health probe's one question (GET /health): does the database answer? One `select 1`, given
 * HEALTH_TIMEOUT_MS: refused, cut or too slow is "no", and the probe answers 503 so a load balancer
 * or orchestrator stops sending traffic while PostgreSQL is down (the API answers 503 meanwhile).
 */
import type { Services } from '../context.ts';

export const HEALTH_TIMEOUT_MS = 3_000;

export async function databaseAnswers(services: Services, timeoutMs = HEALTH_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, false);
    timer.unref();
  });
  try {
    return await Promise.race([services.db.sql.query('select 1').then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
