/**
 * Calls made in one turn of the event loop, handled together: `perTurn(run)` returns a function
 * whose calls are collected until the turn ends (setImmediate) and then handed to `run` as one
 * batch, in the order they were made. `run` settles each call (resolve or reject); if it throws,
 * every call it left unsettled is rejected with that error. One statement per turn instead of one
 * per call: the job queue's completions, Fedify's KV reads and message-queue enqueues.
 *
 * With `maxInFlight`, at most that many batches run at once: calls made while they do wait and go
 * together in the next batch as soon as one finishes (group commit). Under load the batches grow
 * with the round trip instead of the statements multiplying; idle, a call still goes at the end
 * of its turn.
 */
export interface PerTurnCall<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export interface PerTurnOptions {
  maxInFlight?: number;
}

export function perTurn<I, O>(run: (batch: PerTurnCall<I, O>[]) => Promise<void>, options: PerTurnOptions = {}): (item: I) => Promise<O> {
  const maxInFlight = options.maxInFlight ?? Infinity;
  let pending: PerTurnCall<I, O>[] | null = null;
  let scheduled = false;
  let inFlight = 0;
  const schedule = () => {
    if (scheduled || pending === null || inFlight >= maxInFlight) return;
    scheduled = true;
    setImmediate(() => void flush());
  };
  const flush = async () => {
    scheduled = false;
    const batch = pending ?? [];
    pending = null;
    if (batch.length === 0) return;
    inFlight++;
    const settled = new Set<PerTurnCall<I, O>>();
    const calls = batch.map((c) => ({
      item: c.item,
      resolve: (v: O) => void (settled.add(c), c.resolve(v)),
      reject: (e: unknown) => void (settled.add(c), c.reject(e)),
    }));
    try {
      await run(calls);
    } catch (error) {
      for (const c of batch) if (!settled.has(c)) c.reject(error);
    } finally {
      inFlight--;
      schedule();
    }
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      (pending ??= []).push({ item, resolve, reject });
      schedule();
    });
}
