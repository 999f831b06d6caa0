// Opens the embedded store's cluster, making it on a data directory's first start: what a first start cut short left
// is removed and made again, and a copy of the template counts as made only once it opened (else initdb makes one).
import { ClusterTemplateError } from './cluster-manifest.ts';
import { discardCluster, isUnopened, markOpened, removeStaging } from './cluster-staging.ts';
import { type CreateClusterOptions, createCluster, templateOf } from './pglite-cluster.ts';

/**
 * Opens the cluster in pgdata with open (close undoes it), first making it when there is none (createCluster). A copy
 * of the template that never opened (its first start was cut short) is made again; one that does not open (a template
 * that checks out but is not a cluster PostgreSQL can run) is thrown away for one made by initdb, and
 * onTemplateRefused is told why, naming the template. The caller owns DATA_DIR (the owner lock).
 */
export async function openCluster<T>(
  pgdata: string,
  options: CreateClusterOptions,
  open: () => Promise<T>,
  close: (opened: T) => Promise<void>,
): Promise<T> {
  removeStaging(pgdata);
  // nothing was ever stored in it: the service writes only once the cluster opened
  if (isUnopened(pgdata)) discardCluster(pgdata);
  const origin = await createCluster(pgdata, options);
  let opened: T;
  try {
    opened = await open();
  } catch (error) {
    if (origin !== 'template') throw error;
    const refused = new ClusterTemplateError(
      templateOf(options)!,
      `its copy did not open: ${(error as Error).message}`,
    );
    options.onTemplateRefused?.(refused.message);
    discardCluster(pgdata);
    await createCluster(pgdata, { ...options, template: null });
    try {
      opened = await open();
    } catch (second) {
      throw new Error(`the cluster initdb made did not open either: ${(second as Error).message} (${refused.message})`);
    }
  }
  try {
    markOpened(pgdata);
  } catch (error) {
    await close(opened);
    throw error;
  }
  return opened;
}
