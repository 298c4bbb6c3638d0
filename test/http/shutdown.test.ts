import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { handleShutdownSignals } from '../../src/http/index.ts';
import { sleep } from './helpers.ts';

const silent = pino({ level: 'silent' });

describe('handleShutdownSignals', () => {
  it('runs shutdown once on the first signal and exits 0', async () => {
    const exits: number[] = [];
    const calls: string[] = [];
    const dispose = handleShutdownSignals(
      async (signal) => {
        calls.push(signal);
        await sleep(20);
      },
      { log: silent, signals: ['SIGUSR2'], exit: (c) => exits.push(c) },
    );
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      await sleep(50);
      expect(calls).toEqual(['SIGUSR2']);
      expect(exits).toEqual([0]);
    } finally {
      dispose();
    }
  });

  it('exits 1 when shutdown fails, and at once on a second signal', async () => {
    const exits: number[] = [];
    const dispose = handleShutdownSignals(
      async () => {
        await sleep(30);
        throw new Error('db close failed');
      },
      { log: silent, signals: ['SIGUSR2'], exit: (c) => exits.push(c) },
    );
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      process.emit('SIGUSR2', 'SIGUSR2');
      expect(exits).toEqual([1]);
      await sleep(60);
      expect(exits).toEqual([1, 1]);
    } finally {
      dispose();
    }
  });

  it('exits 1 when shutdown takes longer than forceAfterMs', async () => {
    const exits: number[] = [];
    const dispose = handleShutdownSignals(() => new Promise<void>(() => {}), { log: silent, signals: ['SIGUSR2'], forceAfterMs: 30, exit: (c) => exits.push(c) });
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      await sleep(80);
      expect(exits).toEqual([1]);
    } finally {
      dispose();
    }
  });
});
