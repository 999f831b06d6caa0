// Prisma CLI settings (generate, migrate diff): WASM schema engine over an in-memory PGlite,
// because this project never downloads Prisma's native engines. The service applies migrations itself.
import { defineConfig } from 'prisma/config';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';

// schema.prisma requires a datasource url even though a driver adapter is always used
process.env.DATABASE_URL ??= 'postgresql://unused@localhost/unused';

let scratch: PGlite | undefined;
process.once('beforeExit', () => void scratch?.close());

export default defineConfig({
  schema: './schema.prisma',
  migrations: { path: './migrations' },
  experimental: { adapter: true },
  engine: 'js',
  async adapter() {
    scratch ??= new PGlite('memory://');
    return new PrismaPGlite(scratch);
  },
});
