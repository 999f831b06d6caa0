// The pseudonym secret outside DATA_DIR: SECRET_FILE is read at start (SECRET wins over it), a bad file stops
// the service, and in production the service warns when the secret lives in DATA_DIR.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { Secrets } from '../../src/tokens/secret.ts';
import { killAllChildren, startServiceProcess } from '../helpers/service-process.ts';
import { startTestService, tempDir } from '../helpers/service.ts';
import { embeddedDataDir } from '../helpers/stores.ts';

afterAll(() => killAllChildren());

const FILE_SECRET = 'file-secret-'.padEnd(48, 'f');

function secretFile(content: string, dir = tempDir('tma-secret-')): string {
  const file = path.join(dir, 'secret');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(file, content, { mode: 0o600 });
  return file;
}

describe('SECRET_FILE', () => {
  it('is read at start (trimmed), and SECRET wins over it', () => {
    const file = secretFile(`${FILE_SECRET}\n`);
    expect(loadConfig({ SECRET_FILE: file })).toMatchObject({ secret: FILE_SECRET, secretFile: file });
    expect(loadConfig({ SECRET: 's'.repeat(40), SECRET_FILE: '/no/such/dir/secret' })).toMatchObject({
      secret: 's'.repeat(40),
      secretFile: undefined,
    });
  });

  it('stops the service when the file is missing, unreadable or too short', () => {
    expect(() => loadConfig({ SECRET_FILE: '/no/such/dir/secret' })).toThrow(
      new ConfigError('SECRET_FILE /no/such/dir/secret cannot be read (no such file)'),
    );
    const directory = tempDir('tma-secret-');
    expect(() => loadConfig({ SECRET_FILE: directory })).toThrow(
      new ConfigError(`SECRET_FILE ${directory} cannot be read (EISDIR)`),
    );
    const short = secretFile('too-short\n');
    expect(() => loadConfig({ SECRET_FILE: short })).toThrow(
      new ConfigError(`SECRET_FILE ${short} must hold a secret of at least 32 characters`),
    );
  });

  it("keys the service's pseudonyms, and no secret is written into DATA_DIR", async () => {
    const service = await startTestService({ SECRET_FILE: secretFile(FILE_SECRET) });
    try {
      expect(service.services.secrets.fingerprint()).toBe(new Secrets(Buffer.from(FILE_SECRET)).fingerprint());
      expect(fs.existsSync(path.join(service.dataDir, 'secret'))).toBe(false);
    } finally {
      await service.close();
    }
  });
});

describe('the service at start', () => {
  it('answers "cannot start" when SECRET_FILE cannot be read', async () => {
    await expect(startServiceProcess({ DATA_DIR: tempDir(), SECRET_FILE: '/no/such/dir/secret' })).rejects.toThrow(
      /cannot start: SECRET_FILE \/no\/such\/dir\/secret cannot be read \(no such file\)/,
    );
  });

  it('warns once, in production, when the secret lives in DATA_DIR', async () => {
    const dataDir = await embeddedDataDir();
    /** the warnings about the secret's place that one start of the service logs */
    const warnings = async (env: Record<string, string>) => {
      const service = await startServiceProcess({ DATA_DIR: dataDir, ...env });
      await service.stop();
      return service
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; secretFile?: string })
        .filter((entry) => entry.msg.includes('secret'));
    };
    const generated = path.join(dataDir, 'secret');
    expect(await warnings({ NODE_ENV: 'production' })).toEqual([
      expect.objectContaining({
        level: 40,
        secretFile: generated,
        msg: expect.stringContaining('a copy of DATA_DIR can reverse user keys'),
      }),
    ]);
    // the same secret, given through SECRET_FILE inside DATA_DIR, then outside it
    const inside = secretFile(fs.readFileSync(generated, 'utf8'), path.join(dataDir, 'keys'));
    expect(await warnings({ NODE_ENV: 'production', SECRET_FILE: inside })).toEqual([
      expect.objectContaining({ level: 40, secretFile: inside }),
    ]);
    expect(
      await warnings({ NODE_ENV: 'production', SECRET_FILE: secretFile(fs.readFileSync(generated, 'utf8')) }),
    ).toEqual([]);
    expect(await warnings({})).toEqual([]);
  });
});
