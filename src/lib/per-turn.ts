/**
 * Calls made in one turn of the event loop, handled together: `perTurn(run)` returns a function
 * whose calls are collected until the turn ends (setImmediate) and then handed to `run` as one
 * batch, in the order they were made. `run` settles each call (resolve or reject); if it throws,
 * every call it left unsettled is rejected with that error. One statement per turn instead of one
 * per call: the job queue's completions, Fedify's KV reads and message-queue enqueues.
 */
export interface PerTurnCall<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export function perTurn<I, O>(run: (batch: PerTurnCall<I, O>[]) => Promise<void>): (item: I) => Promise<O> {
  let pending: PerTurnCall<I, O>[] | null = null;
  const flush = async () => {
    const batch = pending ?? [];
    pending = null;
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
    }
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      if (pending === null) {
        pending = [];
        setImmediate(() => void flush());
      }
      pending.push({ item, resolve, reject });
    });
}
