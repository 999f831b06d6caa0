// Recognising database errors the same way on PostgreSQL (Prisma maps them) and PGlite (it may not).

/** a unique constraint refused the write: the row is already there */
export function isUniqueViolation(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'P2002' || code === '23505' || (typeof message === 'string' && message.includes('violates unique constraint'));
}
