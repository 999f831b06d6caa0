// npm in a scratch project, as an integrator runs it: an install line as the site and the bot show it, and what the
// lockfile then pins of a package.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';

export const run = promisify(execFile);
export const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** a cold npm fetching over HTTP and writing node_modules can take a while on a busy machine */
export const INSTALL_TIMEOUT_MS = 180_000;

/** runs `npm install <url>` as shown in the project; returns the URL */
export async function runInstallLine(line: string, project: string): Promise<string> {
  const [command, verb, url, ...rest] = line.split(' ');
  expect([command, verb, rest]).toEqual(['npm', 'install', []]);
  await run(npm, [verb!, '--no-audit', '--no-fund', url!], { cwd: project });
  return url!;
}

/**
 * asserts the project depends on the package by the URL (beside the dependencies it had), and its lockfile pins the
 * tarball's very bytes
 */
export function expectInstalledFrom(
  project: string,
  installed: { name: string; url: string; tarball: string; version: string },
  dependenciesBefore: Record<string, string> = {},
) {
  const { name, url, tarball, version } = installed;
  const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8'));
  expect(manifest.dependencies).toEqual({ ...dependenciesBefore, [name]: url });
  const lock = JSON.parse(fs.readFileSync(path.join(project, 'package-lock.json'), 'utf8'));
  expect(lock.packages[`node_modules/${name}`]).toMatchObject({
    version,
    resolved: url,
    integrity: `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`,
  });
}
