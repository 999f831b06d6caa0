// Shared pieces of the durable-log suites: temporary directories, a logger that keeps what it was told, payloads
// that name themselves, and byte surgery on the data file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DurableLogLogger } from '../../src/log/durable-log.ts';

const dirs: string[] = [];

/** a fresh directory under the system's temp dir; removeTempDirs() deletes them all */
export function logDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-log-'));
  dirs.push(dir);
  return path.join(dir, 'log');
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export interface LoggedEntry {
  level: 'warn' | 'error';
  details: Record<string, unknown>;
  message: string;
}

export function recordingLogger(): { logger: DurableLogLogger; entries: LoggedEntry[] } {
  const entries: LoggedEntry[] = [];
  const keep = (level: LoggedEntry['level']) => (details: object, message: string) =>
    entries.push({ level, details: details as Record<string, unknown>, message });
  return { logger: { warn: keep('warn'), error: keep('error') }, entries };
}

/** `<A<id>Z>` then dots up to size: the same marker the child process uses */
export function payload(id: string | number, size = 100): Buffer {
  const head = `<A${id}Z>`;
  return Buffer.from(head.padEnd(Math.max(size, head.length), '.'));
}

export function dataFile(dir: string): string {
  return path.join(dir, 'data.mdb');
}

/** every offset in the file where the bytes occur */
export function offsetsOf(file: string, bytes: Buffer | string): number[] {
  const content = fs.readFileSync(file);
  const needle = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const offsets: number[] = [];
  for (let at = content.indexOf(needle); at !== -1; at = content.indexOf(needle, at + 1)) offsets.push(at);
  return offsets;
}

/** XORs the byte at offset with mask (the file stays the same length) */
export function flipByte(file: string, offset: number, mask = 0x01): void {
  const fd = fs.openSync(file, 'r+');
  try {
    const byte = Buffer.alloc(1);
    fs.readSync(fd, byte, 0, 1, offset);
    byte[0]! ^= mask;
    fs.writeSync(fd, byte, 0, 1, offset);
  } finally {
    fs.closeSync(fd);
  }
}

export function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}
