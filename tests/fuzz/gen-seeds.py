#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write the seed corpora of the fuzz targets that have a generator here.

    tests/fuzz/gen-seeds.py [TARGET...]

Each seed is a small input that takes one main path of its target (a
valid chain, a register sequence that reaches DRIVER_OK, ...); the input
layouts are described at the top of each tests/fuzz/fuzz_<x>.c. Seeds are
rewritten in tests/fuzz/corpus/<target>/ under fixed names, so running
this again changes nothing unless a layout changed. Handwritten seeds in
the same directories (e.g. regression inputs) are left alone.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATORS = {}


def target(fn):
    GENERATORS[fn.__name__.replace("seeds_", "fuzz_")] = fn
    return fn


def write(tgt, name, data):
    d = os.path.join(HERE, "corpus", tgt)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- fuzz_platform: 12-byte ops, see fuzz_op() ----
def plat_op(kind, sel=0, off=0, value=0):
    return struct.pack("<BBHQ", kind, sel, off & 0xffff, value)


def pio(dev, reg, write=False, value=0, width=0):
    """PIO op at device dev (0 COM1, 1 kbd data, 2 kbd cmd, 3 exit) + reg."""
    return plat_op(0 | (4 if write else 0) | width << 3, dev, reg + 4, value)


@target
def seeds_platform():
    # Linux 8250 probe: scratch, loopback test, FIFO detection, then TX/RX.
    probe = b"".join([
        pio(0, 7, True, 0xa5), pio(0, 7),
        pio(0, 4, True, 0x1a), pio(0, 6),          # loopback, MSR
        pio(0, 0, True, 0x41), pio(0, 5), pio(0, 0),  # loop a byte back
        pio(0, 4, True, 0x0b),                     # DTR|RTS|OUT2
        pio(0, 3, True, 0x83), pio(0, 0, True, 1), pio(0, 1, True, 0),
        pio(0, 3, True, 0x03),                     # 115200 8N1
        pio(0, 2, True, 0xc7), pio(0, 2),          # FIFO on, IIR
        pio(0, 1, True, 0x0f), pio(0, 2),          # all interrupts
        plat_op(3, 4, 0, 0x0a6f6c6c6568),           # host types "hello\n"
        pio(0, 5), pio(0, 0), pio(0, 0), pio(0, 2),
        pio(0, 0, True, 0x4f), pio(0, 0, True, 0x4b, 2),
    ])
    write("fuzz_platform", "uart-probe", probe)
    write("fuzz_platform", "kbd-reset",
          pio(2, 0) + pio(1, 0) + pio(2, 0, True, 0xfe))
    write("fuzz_platform", "exit-pio", pio(3, 0, True, 3) + pio(3, 0))
    write("fuzz_platform", "exit-mmio",
          plat_op(2 | 4, 7, 16) + plat_op(2 | 4 | 3 << 3, 9, 12))
    # Extra ranges: one that fits, one that overlaps COM1, one that wraps.
    write("fuzz_platform", "bus-ranges",
          plat_op(3 | 4, 4, 0x500) + plat_op(3 | 4, 8, 0x3f0) +
          plat_op(3 | 4 | 0x80, 0x81, 0, 0xfffffffffffffff0) +
          plat_op(1, 0, 0x502) + plat_op(1 | 2 << 3, 0, 0x503))


def main(argv):
    names = argv[1:] or sorted(GENERATORS)
    for n in names:
        GENERATORS[n]()


if __name__ == "__main__":
    main(sys.argv)
