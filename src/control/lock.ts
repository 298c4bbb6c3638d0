/**
 * A data directory and its embedded database belong to one process. Whoever opens the data directory takes
 * this lock first: an exclusive pid file, reclaimed when the process that wrote it is gone.
 */
import { openSync, writeSync, closeSync, readFileSync, unlinkSync } from 'node:fs';
import { ensurePrivateDir } from '../../config/secrets.ts';
import path from 'node:path';
import { processAlive } from '../lib/process-alive.ts';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  readonly pid: number;
  constructor(dir: string, pid: number) {
    super(`The data directory ${dir} is in use by process ${pid}.`);
    this.pid = pid;
  }
}

export interface DataDirLock {
  release(): void;
}

export function lockDataDir(dataDir: string): DataDirLock {
  ensurePrivateDir(dataDir);
  const file = path.join(dataDir, 'roost.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) throw new DataDirLockedError(dataDir, pid);
      unlinkSync(file); // stale: its process is gone
    }
  }
  throw new Error(`Could not lock ${dataDir}`);
}
