// An app's own daily quotas (null: the service's default), as an administrator sets them, with the audit row.
import type { PrismaClient } from '../db/store.ts';

/** an app's own quotas as an administrator set them; null: the service's default */
export interface QuotaOverrides {
  eventsPerDay: number | null;
  bytesPerDay: number | null;
}

/** the audit row of the change (TokenRegistry.auditRecord) */
type AuditRow = Parameters<PrismaClient['auditLog']['create']>[0]['data'];

/** the quotas after applying the change (a field left out stays as it is); no change writes nothing */
export async function changeQuotas(
  prisma: PrismaClient,
  appId: number,
  change: Partial<QuotaOverrides>,
  audit: AuditRow,
): Promise<QuotaOverrides> {
  const data = {
    ...(change.eventsPerDay === undefined
      ? {}
      : { quotaEventsPerDay: change.eventsPerDay === null ? null : BigInt(change.eventsPerDay) }),
    ...(change.bytesPerDay === undefined
      ? {}
      : { quotaBytesPerDay: change.bytesPerDay === null ? null : BigInt(change.bytesPerDay) }),
  };
  const select = { quotaEventsPerDay: true, quotaBytesPerDay: true } as const;
  const [quotas] =
    Object.keys(data).length === 0
      ? [await prisma.app.findUniqueOrThrow({ where: { id: appId }, select })]
      : await prisma.$transaction([
          prisma.app.update({ where: { id: appId }, data, select }),
          prisma.auditLog.create({ data: audit }),
        ]);
  const toNumber = (value: bigint | null) => (value === null ? null : Number(value));
  return { eventsPerDay: toNumber(quotas.quotaEventsPerDay), bytesPerDay: toNumber(quotas.quotaBytesPerDay) };
}
