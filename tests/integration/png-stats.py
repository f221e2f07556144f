#!/usr/bin/env python3
# png-stats.py FILE: what a picture holds, for tests that must know it is not blank.
# Prints "WIDTHxHEIGHT colours=N background=F": the distinct colours (up to 4096 counted)
# and the share of pixels of the most common one. Decodes 8-bit PNGs (grey, RGB, RGBA,
# grey+alpha, palette) with zlib only, so that it needs nothing beyond python3-minimal.
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, head = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    width, height, depth, ctype, _, _, interlace = head
    if depth != 8 or interlace or ctype not in CHANNELS:
        raise ValueError("only 8-bit, non-interlaced PNGs: %r" % (head,))
    bpp = CHANNELS[ctype]
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], up_left)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = decode(open(sys.argv[1], "rb").read())
    counts = {}
    for line in rows:
        for x in range(0, len(line), bpp):
            px = line[x:x + bpp]
            if px in counts or len(counts) < 4096:
                counts[px] = counts.get(px, 0) + 1
    top = max(counts.values()) if counts else 0
    print("%dx%d colours=%d background=%.4f" % (width, height, len(counts),
                                                 top / float(max(1, width * height))))


if __name__ == "__main__":
    main()
