// Recognising database errors the same way on PostgreSQL (Prisma maps them) and PGlite (it may not).

/** a unique constraint refused the write: the row is already there */
export function isUniqueViolation(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (
    code === 'P2002' ||
    code === '23505' ||
    (typeof message === 'string' && message.includes('violates unique constraint'))
  );
}

/** SQLSTATE classes that blame the data of a statement (22 data exception, 23 integrity, 42 statement), not the store */
export function blamesData(error: unknown): boolean {
  return /^(22|23|42)/.test(String((error as { code?: unknown }).code ?? ''));
}
