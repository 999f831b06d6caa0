// Prisma CLI settings (generate, migrate diff): WASM schema engine over an in-memory PGlite,
// because this project never downloads Prisma's native engines. The service applies migrations itself.
import { defineConfig } from 'prisma/config';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

// schema.prisma requires a datasource url even though a driver adapter is always used
process.env.DATABASE_URL ??= 'postgresql://unused@localhost/unused';

const opened: PGlite[] = [];
process.once('beforeExit', () => void Promise.all(opened.map((db) => db.close())));

function scratchDatabase(): PGlite {
  const db = new PGlite('memory://');
  opened.push(db);
  return db;
}

// pglite-prisma-adapter 0.6 runs migration scripts without awaiting them and sends parameterless
// statements through the extended protocol, which refuses multi-statement migration files: run both
// through PGlite.exec (simple protocol) instead.
function withScripts(adapter: SqlDriverAdapter, db: PGlite): SqlDriverAdapter {
  const executeRaw = adapter.executeRaw.bind(adapter);
  adapter.executeScript = async (script) => {
    await db.exec(script);
  };
  adapter.executeRaw = async (query) => {
    if (query.args.length > 0) return executeRaw(query);
    const results = await db.exec(query.sql);
    return results.reduce((sum, result) => sum + (result.affectedRows ?? 0), 0);
  };
  return adapter;
}

const factory: SqlMigrationAwareDriverAdapterFactory = {
  provider: 'postgres',
  adapterName: 'pglite-prisma-adapter',
  async connect() {
    const db = scratchDatabase();
    return withScripts(await new PrismaPGlite(db).connect(), db);
  },
  async connectToShadowDb() {
    const db = scratchDatabase();
    return withScripts(await new PrismaPGlite(db).connect(), db);
  },
};

export default defineConfig({
  schema: './schema.prisma',
  migrations: { path: './migrations' },
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => factory,
});
