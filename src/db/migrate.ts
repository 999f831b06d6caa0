// Applies the committed Prisma migrations at start, recorded in Prisma's own _prisma_migrations table.
import { named } from './named-sql.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../platform/project-paths.ts';
import type { SqlRunner } from './sql.ts';

export const MIGRATIONS_DIR = path.join(ROOT, 'prisma', 'migrations');

// same columns as the table Prisma Migrate creates, so `prisma migrate status` agrees with us
const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

interface Migration {
  name: string;
  script: string;
  checksum: string;
}

function readMigrations(dir: string): Migration[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const script = fs.readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, script, checksum: crypto.createHash('sha256').update(script).digest('hex') };
    });
}

/** Applies every migration not yet recorded, all in one transaction; returns the names applied. */
export async function applyMigrations(sql: SqlRunner, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = readMigrations(dir);
  return sql.transaction(async (tx) => {
    // nodes sharing one PostgreSQL must not migrate at the same time
    if (sql.kind === 'server') await tx.query(`SELECT pg_advisory_xact_lock(7466355023)`);
    await tx.exec(MIGRATIONS_TABLE);
    const applied = new Map(
      (
        await tx.query<{ migration_name: string; checksum: string }>(
          `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL`,
        )
      ).map((row) => [row.migration_name, row.checksum]),
    );
    const done: string[] = [];
    for (const migration of migrations) {
      const checksum = applied.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(`migration ${migration.name} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await tx.exec(migration.script);
      await tx.query(
        ...named(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ({{id}}, {{checksum}}, now(), {{name}}, 1)`,
          { id: crypto.randomUUID(), checksum: migration.checksum, name: migration.name },
        ),
      );
      done.push(migration.name);
    }
    return done;
  });
}
