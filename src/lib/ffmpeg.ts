/**
 * ffmpeg and ffprobe as child processes, bounded: at most `concurrency` ffmpeg runs at once (and
 * as many ffprobe runs, in slots of their own, so a quick probe never waits behind a long
 * transcode), each killed after `timeoutMs` (a probe after `probeTimeoutMs`), each with its address space capped (RLIMIT_AS through
 * the shell's `ulimit -v`, so an allocation past it fails inside ffmpeg instead of swelling the
 * machine). Arguments go to the binary as an argv array: nothing is interpreted by a shell.
 *
 * The binaries are by default the ones the `@ffmpeg-installer/ffmpeg` and
 * `@ffprobe-installer/ffprobe` packages ship for this platform (npm installs them as ordinary
 * optional dependencies: no download at install time); a path in the configuration replaces them.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

export interface FfmpegOptions {
  /** null: the packaged binary. */
  ffmpegPath: string | null;
  ffprobePath: string | null;
  concurrency: number;
  timeoutMs: number;
  /** Bytes of address space per process; 0: unbounded. */
  memoryBytes: number;
  /** An ffprobe run is killed after this long (30 s unless set: reading a header is quick). */
  probeTimeoutMs?: number;
}

/** Why a run failed: it did not start (binary missing), timed out (killed), or exited non-zero. */
export class FfmpegError extends Error {
  override name = 'FfmpegError';
  readonly reason: 'unavailable' | 'timeout' | 'failed';
  constructor(reason: 'unavailable' | 'timeout' | 'failed', message: string) {
    super(message);
    this.reason = reason;
  }
}

/** A counting semaphore: `run` waits for a slot, runs, frees the slot. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(n: number) {
    this.#free = Math.max(1, n);
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
  /** Runs waiting for a slot. */
  get queued(): number {
    return this.#waiting.length;
  }
}

const require = createRequire(import.meta.url);

/** The packaged binary of `pkg` (`{ path }` export), or null when this platform has none. */
function packaged(pkg: string): string | null {
  try {
    return (require(pkg) as { path: string }).path;
  } catch {
    return null;
  }
}

/** What a finished run printed (stdout and stderr, each cut to a bound). */
export interface RunOutput {
  stdout: string;
  stderr: string;
}

const MAX_OUTPUT = 1024 * 1024;

export class Ffmpeg {
  readonly #opts: FfmpegOptions;
  readonly #transcodes: Slots;
  readonly #probes: Slots;
  /** ffmpeg processes running now (tests and the bench read it). */
  running = 0;
  /** The most that ran at once. */
  peakRunning = 0;

  constructor(opts: FfmpegOptions) {
    this.#opts = opts;
    this.#transcodes = new Slots(opts.concurrency);
    this.#probes = new Slots(opts.concurrency);
  }

  get ffmpegPath(): string | null {
    return this.#opts.ffmpegPath ?? packaged('@ffmpeg-installer/ffmpeg');
  }

  get ffprobePath(): string | null {
    return this.#opts.ffprobePath ?? packaged('@ffprobe-installer/ffprobe');
  }

  /** Runs ffmpeg with `args` in a transcode slot; rejects with an FfmpegError. */
  async ffmpeg(args: readonly string[]): Promise<RunOutput> {
    const bin = this.ffmpegPath;
    if (!bin) throw new FfmpegError('unavailable', 'no ffmpeg binary for this platform: set ROOST_FFMPEG_PATH');
    return this.#transcodes.run(async () => {
      this.running++;
      this.peakRunning = Math.max(this.peakRunning, this.running);
      try {
        return await this.#spawn(bin, ['-nostdin', '-hide_banner', '-loglevel', 'error', ...args], this.#opts.timeoutMs);
      } finally {
        this.running--;
      }
    });
  }

  /** ffprobe's JSON description of a file (format and streams), in a probe slot. */
  async probe(file: string): Promise<unknown> {
    const bin = this.ffprobePath;
    if (!bin) throw new FfmpegError('unavailable', 'no ffprobe binary for this platform: set ROOST_FFPROBE_PATH');
    const out = await this.#probes.run(() =>
      this.#spawn(bin, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '--', file], this.#opts.probeTimeoutMs ?? 30_000),
    );
    try {
      return JSON.parse(out.stdout);
    } catch {
      throw new FfmpegError('failed', 'ffprobe printed no JSON');
    }
  }

  #spawn(bin: string, args: readonly string[], timeoutMs: number): Promise<RunOutput> {
    const { memoryBytes } = this.#opts;
    // `exec` replaces the shell: the pid is ffmpeg's own, and the kill below reaches it.
    const bounded = memoryBytes > 0 && process.platform !== 'win32';
    const child = bounded
      ? spawn('/bin/sh', ['-c', 'ulimit -v "$1" && shift && exec "$@"', 'sh', String(Math.ceil(memoryBytes / 1024)), bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(bin, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    return new Promise<RunOutput>((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      let timedOut = false;
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        if (stdout.length < MAX_OUTPUT) stdout += d;
      });
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        if (stderr.length < MAX_OUTPUT) stderr += d;
      });
      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new FfmpegError('unavailable', `${bin}: ${err.message}`));
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) reject(new FfmpegError('timeout', `${bin} killed after ${Math.round(timeoutMs / 1000)} s`));
        else if (code === 0) resolve({ stdout, stderr });
        // 126/127: the shell could not run the binary (not executable, not found).
        else if (bounded && (code === 126 || code === 127)) reject(new FfmpegError('unavailable', `${bin}: ${stderr.trim() || 'cannot run'}`));
        else reject(new FfmpegError('failed', `${bin} exited ${code ?? signal}: ${stderr.trim().slice(-500)}`));
      });
    });
  }
}
