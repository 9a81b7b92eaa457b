/**
 * Pure format detection from the first bytes of an image (its magic numbers), before qemu-img sees
 * it: qemu-img is always told the format (`-f`), never left to probe, so a raw image that happens to
 * start like a qcow2 header cannot smuggle in a backing file.
 */

export const DISK_FORMATS = ['raw', 'qcow2', 'vmdk', 'vdi', 'iso'] as const;
export type DiskFormat = (typeof DISK_FORMATS)[number];

/** How many leading bytes detection needs (the ISO 9660 volume descriptor sits at 32 KiB + 1). */
export const DETECT_BYTES = 0x9006;

const SECTOR = 512;

export type Detection =
  | { readonly kind: 'image'; readonly format: DiskFormat }
  | { readonly kind: 'compressed'; readonly compression: 'gzip' | 'xz' | 'zstd' | 'bzip2' }
  | { readonly kind: 'not-an-image'; readonly why: string };

function startsWith(head: Uint8Array, offset: number, bytes: readonly number[]): boolean {
  if (head.length < offset + bytes.length) return false;
  return bytes.every((b, i) => head[offset + i] === b);
}

function ascii(text: string): number[] {
  return [...text].map((c) => c.charCodeAt(0));
}

/**
 * Detect the format from `head` (at least DETECT_BYTES of the file, or all of it when shorter) and
 * the whole file's size. A raw disk has no magic: anything that is a whole number of 512-byte sectors
 * and does not look like text (an HTML error page, a README) is taken as raw.
 */
export function detectFormat(head: Uint8Array, size: number): Detection {
  if (startsWith(head, 0, [0x1f, 0x8b])) return { kind: 'compressed', compression: 'gzip' };
  if (startsWith(head, 0, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])) return { kind: 'compressed', compression: 'xz' };
  if (startsWith(head, 0, [0x28, 0xb5, 0x2f, 0xfd])) return { kind: 'compressed', compression: 'zstd' };
  if (startsWith(head, 0, ascii('BZh'))) return { kind: 'compressed', compression: 'bzip2' };
  if (startsWith(head, 0, [0x51, 0x46, 0x49, 0xfb])) return { kind: 'image', format: 'qcow2' };
  if (startsWith(head, 0, ascii('KDMV')) || startsWith(head, 0, ascii('# Disk DescriptorFile'))) return { kind: 'image', format: 'vmdk' };
  if (startsWith(head, 0x40, [0x7f, 0x10, 0xda, 0xbe])) return { kind: 'image', format: 'vdi' };
  for (const offset of [0x8001, 0x8801, 0x9001]) {
    if (startsWith(head, offset, ascii('CD001'))) return { kind: 'image', format: 'iso' };
  }
  if (size === 0) return { kind: 'not-an-image', why: 'the source is empty' };
  if (looksLikeText(head)) return { kind: 'not-an-image', why: 'the source is text (an HTML page or a document?), not a disk image' };
  if (size % SECTOR !== 0) {
    return {
      kind: 'not-an-image',
      why: `the source is ${size} bytes, not a qcow2, vmdk, vdi or iso image, and not a raw disk (a raw disk is a whole number of 512-byte sectors)`,
    };
  }
  return { kind: 'image', format: 'raw' };
}

/** The first KiB is printable text (UTF-8 or ASCII, with tabs and newlines) and holds no NUL byte. */
function looksLikeText(head: Uint8Array): boolean {
  const sample = head.subarray(0, 1024);
  if (sample.length === 0) return false;
  let printable = 0;
  for (const b of sample) {
    if (b === 0) return false;
    if (b === 9 || b === 10 || b === 13 || (b >= 32 && b < 127) || b >= 0x80) printable++;
  }
  return printable === sample.length;
}
