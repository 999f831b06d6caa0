// The install on the Node the README names: every package in the lockfile takes this Node (npm would warn of one
// that does not, EBADENGINE, on every `npm ci`), and the project says which Node it needs.
import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../helpers/service-process.ts';

const read = (file: string) => JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8'));

describe("the install's engines", () => {
  it('has no package in the lockfile that asks for another Node than this one and the one the project names', () => {
    const lock = read('package-lock.json') as { packages: Record<string, { engines?: { node?: string } }> };
    const named = (read('package.json') as { engines: { node: string } }).engines.node;
    expect(semver.satisfies(process.version, named)).toBe(true);
    // the oldest Node the project names must be taken by every package too
    const oldest = semver.minVersion(named)!.version;
    const refusing = Object.entries(lock.packages)
      .filter(([, entry]) => entry.engines?.node !== undefined)
      .filter(([, entry]) => {
        const range = entry.engines!.node!;
        return !semver.satisfies(process.version, range) || !semver.satisfies(oldest, range);
      })
      .map(([name, entry]) => `${name} wants node ${entry.engines!.node}`);
    expect(refusing).toEqual([]);
  });
});
