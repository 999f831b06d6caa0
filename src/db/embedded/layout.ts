// The embedded store's layout: its directory in DATA_DIR and the bounds of its WAL on disk. Constants only, so code
// that needs them (the service's wiring, the log's disk guard, a server store's check of DATA_DIR) loads no PGlite.

/** the embedded store's directory in DATA_DIR */
export const EMBEDDED_DIR = 'pgdata';

/** the WAL's size on disk is bounded by max_wal_size (recycled segments), so the free space it may still take is known */
export const MAX_WAL_BYTES = 128 * 1024 ** 2;

/** PGlite's WAL segments, each allocated whole (zero-filled) before the first record goes in */
export const WAL_SEGMENT_BYTES = 16 * 1024 ** 2;
