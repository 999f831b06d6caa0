// What a log line says about a failure (mostly the store's): its type, code and the last line of its message.
// Prisma's errors carry tens of kilobytes of code frames in message and stack; logged whole for every request
// while the store is down they would make the process grow fast.

export function errorSummary(error: unknown): { type: string; code?: unknown; message: string } {
  const lines = String((error as Error | undefined)?.message ?? error)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return {
    type: (error as object | null)?.constructor?.name ?? typeof error,
    code: (error as { code?: unknown } | null)?.code,
    message: (lines.at(-1) ?? '').slice(0, 300),
  };
}
