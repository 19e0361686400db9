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


# ---- fuzz_virtq: 10-byte header, 20-byte ops, see fuzz_op() ----
F_NEXT, F_WRITE, F_IND = 1, 2, 4


def vq_header(qsize, indirect=False, event_idx=False, place=1, units=(0, 0, 0),
              start=0, long_bulk=False):
    feat = (1 if indirect else 0) | (2 if event_idx else 0)
    feat |= 16 if long_bulk else 0
    return struct.pack("<HBB4H", qsize, feat, place, *units, start)


def vq_op(code, a=0, b=0, c=0, d=0, e=0):
    return struct.pack("<BBHQII", code, a, b & 0xffff, c, d, e)


def vq_desc(i, addr, length, flags=0, nxt=0, indirect_area=False):
    return vq_op(0, 0x80 if indirect_area else 0, i, addr, length,
                 flags | nxt << 16)


def vq_publish(head, n=1):
    return vq_op(1, n - 1, head)


def vq_device(pops=1, complete=1, enable=True):
    return vq_op(5, pops - 1, complete, 0, 1 if enable else 2)


@target
def seeds_virtq():
    # A request-shaped chain: header, data, status byte.
    chain = (vq_desc(0, 0x4000, 16, F_NEXT, 1) +
             vq_desc(1, 0x4100, 512, F_NEXT, 2) +
             vq_desc(2, 0x4400, 1, F_WRITE))
    write("fuzz_virtq", "chain", vq_header(16) + chain + vq_publish(0) +
          vq_device())
    write("fuzz_virtq", "chain-event-idx",
          vq_header(16, event_idx=True) + chain + vq_op(4, 0, 0) +
          vq_publish(0) + vq_device() + vq_publish(0) + vq_device())
    # The same through an indirect table in region C (odd host address).
    ind = (vq_desc(0, 0x4000, 16, F_NEXT, 1, True) +
           vq_desc(1, 0x4400, 1, F_WRITE, 0, True) +
           vq_desc(0, 0x10000, 32, F_IND))
    write("fuzz_virtq", "indirect", vq_header(64, indirect=True) + ind +
          vq_publish(0) + vq_device())
    # A 1024-entry ring with each part ending at its region's end, a
    # buffer ending at the A/B boundary and one straddling it.
    edge = (vq_desc(0, 0x7f00, 0x100, F_WRITE) +
            vq_desc(1, 0x7ff0, 0x20, F_WRITE) +
            vq_desc(2, 0xbff0, 0x10))
    write("fuzz_virtq", "region-edges", vq_header(1024, place=2) + edge +
          vq_publish(0, 3) + vq_device(3, 3))
    # Across the 16-bit wrap: the long way (a bulk run of 65600 chains),
    # and from indices started just below it, with and without EVENT_IDX.
    tmpl = vq_desc(0, 0x4000, 64, F_WRITE)
    write("fuzz_virtq", "wrap-bulk",
          vq_header(256, event_idx=True, long_bulk=True) +
          tmpl + b"".join(vq_op(7, 1, 127) for _ in range(8)) +
          vq_op(7, 1, 1))
    write("fuzz_virtq", "wrap-event-idx",
          vq_header(256, event_idx=True, start=0xfff0) + tmpl +
          vq_op(7, 1, 0) + vq_op(4, 0, 2) + vq_publish(0, 4) +
          vq_device(4, 4))
    write("fuzz_virtq", "wrap", vq_header(128, start=0xffe0) + tmpl +
          vq_op(4, 1, 0) + vq_op(7, 0, 0) + vq_op(4, 0, 0) + vq_op(7, 0, 1))
    # The driver races the walk: at read 2 (the first descriptor) it
    # rewrites desc 0's next field, at read 3 the length of desc 1.
    race = (chain + vq_op(6, 2, 1, 0x1, 0, 14) +
            vq_op(6, 3, 2, 0xffffffff, 0, 24))
    write("fuzz_virtq", "race", vq_header(16, place=1) + race +
          vq_publish(0) + vq_device() + vq_publish(0) + vq_device())
    # Out-of-order completion with several chains in flight.
    multi = b"".join(vq_desc(i, 0x4000 + 0x100 * i, 0x80, F_WRITE)
                     for i in range(8))
    write("fuzz_virtq", "out-of-order", vq_header(8) + multi +
          vq_publish(0, 8) + vq_op(5, 7, 0x8003) + vq_op(5, 0, 5))


def main(argv):
    names = argv[1:] or sorted(GENERATORS)
    for n in names:
        GENERATORS[n]()


if __name__ == "__main__":
    main(sys.argv)
