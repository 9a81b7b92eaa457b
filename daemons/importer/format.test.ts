import { describe, expect, it } from '@jest/globals';
import { DETECT_BYTES, detectFormat } from './format.js';

function head(size: number, patches: Array<[number, number[] | string]>): Buffer {
  const b = Buffer.alloc(Math.min(size, DETECT_BYTES));
  for (const [offset, bytes] of patches) {
    if (typeof bytes === 'string') b.write(bytes, offset, 'ascii');
    else Buffer.from(bytes).copy(b, offset);
  }
  return b;
}

describe('detectFormat', () => {
  it.each([
    ['qcow2', head(1 << 20, [[0, [0x51, 0x46, 0x49, 0xfb]]]), 1 << 20],
    ['vmdk', head(1 << 20, [[0, 'KDMV']]), 1 << 20],
    ['vmdk', head(4096, [[0, '# Disk DescriptorFile\n']]), 4096],
    [
      'vdi',
      head(1 << 20, [
        [0, '<<< Oracle VM VirtualBox Disk Image >>>\n'],
        [0x40, [0x7f, 0x10, 0xda, 0xbe]],
      ]),
      1 << 20,
    ],
    ['iso', head(1 << 20, [[0x8001, 'CD001']]), 1 << 20],
    ['iso', head(1 << 20, [[0x9001, 'CD001']]), 1 << 20],
    ['raw', head(1 << 20, []), 1 << 20],
    ['raw', head(1 << 20, [[510, [0x55, 0xaa]]]), 1 << 20],
  ])('knows %s by its magic', (format, bytes, size) => {
    expect(detectFormat(bytes, size)).toEqual({ kind: 'image', format });
  });

  it.each([
    ['gzip', [0x1f, 0x8b, 8]],
    ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
    ['zstd', [0x28, 0xb5, 0x2f, 0xfd]],
  ])('says a %s stream is compressed', (compression, magic) => {
    expect(detectFormat(head(4096, [[0, magic]]), 4096)).toEqual({ kind: 'compressed', compression });
  });

  it('refuses text such as an HTML error page, whatever its size', () => {
    const page = Buffer.alloc(1024, 'a');
    page.write('<html><body>404 Not Found</body></html>');
    const d = detectFormat(page, 1024);
    expect(d).toMatchObject({ kind: 'not-an-image' });
    expect(d.kind === 'not-an-image' && d.why).toMatch(/text/);
  });

  it('refuses an empty source and bytes that are no whole number of sectors', () => {
    expect(detectFormat(Buffer.alloc(0), 0)).toMatchObject({ kind: 'not-an-image', why: expect.stringMatching(/empty/) as unknown });
    expect(detectFormat(Buffer.from([0, 1, 2, 3]), 1000)).toMatchObject({ kind: 'not-an-image', why: expect.stringMatching(/512-byte sectors/) as unknown });
  });

  it('does not take a short file for an iso because it is too short to hold the descriptor', () => {
    expect(detectFormat(head(2048, []), 2048)).toEqual({ kind: 'image', format: 'raw' });
  });
});
