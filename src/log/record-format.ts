// How the log stores a record: a CRC-32 and the append time ahead of the caller's bytes, so damage is found on read.
import zlib from 'node:zlib';

/** bytes ahead of the caller's: CRC-32 of everything after it (4), append time in ms (8) */
export const HEADER_BYTES = 12;

/** zlib.crc32 exists from Node 20.15; the table version keeps older 20.x working (same polynomial, same result) */
const crc32: (data: Uint8Array) => number = zlib.crc32 ?? tableCrc32;

let table: Uint32Array | undefined;
function tableCrc32(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

export { tableCrc32 as crc32ForTests };

export function encodeRecord(payload: Uint8Array, appendedAt: number): Buffer {
  const stored = Buffer.allocUnsafe(HEADER_BYTES + payload.byteLength);
  stored.writeDoubleLE(appendedAt, 4);
  stored.set(payload, HEADER_BYTES);
  stored.writeUInt32LE(crc32(stored.subarray(4)), 0);
  return stored;
}

export interface DecodedRecord {
  appendedAt: number;
  payload: Buffer;
}

/** null when the stored bytes are not what was written (a flipped or torn byte anywhere in them) */
export function decodeRecord(stored: Buffer): DecodedRecord | null {
  if (stored.length < HEADER_BYTES || stored.readUInt32LE(0) !== crc32(stored.subarray(4))) return null;
  return { appendedAt: stored.readDoubleLE(4), payload: stored.subarray(HEADER_BYTES) };
}

/** the watermark record: what is released, and the numbering floor (no sequence number up to it is handed out) */
export interface Watermark {
  releasedThrough: number;
  numberedThrough: number;
}

export function encodeWatermark(watermark: Watermark): Buffer {
  const payload = Buffer.allocUnsafe(16);
  payload.writeDoubleLE(watermark.releasedThrough, 0);
  payload.writeDoubleLE(watermark.numberedThrough, 8);
  return encodeRecord(payload, Date.now());
}

export function decodeWatermark(stored: Buffer): Watermark | null {
  const decoded = decodeRecord(stored);
  if (!decoded || decoded.payload.length !== 16) return null;
  const releasedThrough = decoded.payload.readDoubleLE(0);
  const numberedThrough = decoded.payload.readDoubleLE(8);
  const valid = (value: number) => Number.isSafeInteger(value) && value >= 0;
  return valid(releasedThrough) && valid(numberedThrough) ? { releasedThrough, numberedThrough } : null;
}
