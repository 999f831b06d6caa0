// Per-app server keys: the integrator's bot or backend sends events to POST /events with one, without an Origin.
// Issued, listed, revoked and checked exactly like read keys (read-keys.ts); only the prefix and table differ.
import type { PrismaClient } from '../db/store.ts';
import { urlSafeFormat } from './format.ts';
import { AppKeys, type KeyKind, type ReadKeysOptions } from './read-keys.ts';
import type { TokenRegistry } from './registry.ts';

/** secret scanners can match /tma_server_[A-Za-z0-9_-]{32}/ */
export const SERVER_KEY_PREFIX = 'tma_server_';

export const SERVER_KEY_KIND: KeyKind = {
  prefix: SERVER_KEY_PREFIX,
  noun: 'server key',
  model: 'serverKey',
  audit: 'server_key',
  format: urlSafeFormat(SERVER_KEY_PREFIX),
};

export class ServerKeys extends AppKeys {
  constructor(prisma: PrismaClient, registry: TokenRegistry, options: ReadKeysOptions = {}) {
    super(SERVER_KEY_KIND, prisma, registry, options);
  }
}
