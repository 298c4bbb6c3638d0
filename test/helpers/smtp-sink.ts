/**
 * A local SMTP server on loopback for the mail tests (smtp-server): it accepts every message
 * without TLS or authentication and keeps it, decoded enough to read (headers, and the text body
 * with quoted-printable or base64 undone), so a test can find the mail and follow its link.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface SunkMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

export interface SmtpSink {
  port: number;
  mails: SunkMail[];
  /** The mails to `address`, oldest first. */
  to(address: string): SunkMail[];
  /** Resolves with the `n`th mail (1-based) to `address` once it has come. */
  waitFor(address: string, n?: number, timeoutMs?: number): Promise<SunkMail>;
  /** Refuse the next `n` messages (451), as a server in trouble does. */
  failNext(n: number): void;
  close(): Promise<void>;
}

function decodeQuotedPrintable(s: string): string {
  const bytes = Buffer.from(s.replace(/=\r?\n/g, ''), 'latin1');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x3d && i + 2 < bytes.length && /^[0-9A-F]{2}$/i.test(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!))) {
      out.push(parseInt(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!), 16));
      i += 2;
    } else out.push(bytes[i]!);
  }
  return Buffer.from(out).toString('utf8');
}

function decodeHeader(value: string): string {
  return value.replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_, enc: string, text: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}

function parse(raw: string, from: string, to: string[]): SunkMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1] ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable' ? decodeQuotedPrintable(body) : encoding === 'base64' ? Buffer.from(body, 'base64').toString('utf8') : body;
  return { from, to, subject: decodeHeader(header('Subject')), text: text.replace(/\r\n/g, '\n'), raw };
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: SunkMail[] = [];
  let failing = 0;
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (failing > 0) {
          failing--;
          const err = new Error('Try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          return callback(err);
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push(parse(Buffer.concat(chunks).toString('latin1'), from, session.envelope.rcptTo.map((r) => r.address)));
        for (const w of waiters) w();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const to = (address: string) => mails.filter((m) => m.to.some((t) => t.toLowerCase() === address.toLowerCase()));
  return {
    port,
    mails,
    to,
    failNext(n) {
      failing = n;
    },
    waitFor(address, n = 1, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const got = to(address);
          if (got.length >= n) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(got[n - 1]!);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no mail #${n} to ${address} within ${timeoutMs} ms (got ${to(address).length})`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
