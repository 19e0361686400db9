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
import json
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
    """PIO op at device dev (0 COM1, 1 kbd data, 2 kbd cmd, 3 exit,
    4 boot-time, 5 pvpanic) + reg."""
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
    # Boot-time marks: init, a user mark, a non-mark, a read, then MMIO
    # (offset bit 15 selects the boot-time register): 123 and a wide write.
    write("fuzz_platform", "boottime",
          pio(4, 0, True, 1) + pio(4, 0, True, 7) + pio(4, 0, True, 0x42) +
          pio(4, 0) + pio(4, 1, True, 1) +
          plat_op(2 | 4, 123, 0x8000 | 16) +
          plat_op(2 | 4 | 3 << 3, 2, 0x8000 | 16) +
          plat_op(2, 0, 0x8000 | 16))
    # pvpanic as Linux drives it: the capability read at probe, then
    # CRASH_LOADED (twice: one log line), junk bits, no bits, a 2-byte
    # write (dropped by the 1-byte range), the ports around it, PANICKED.
    write("fuzz_platform", "pvpanic",
          pio(5, 0) + pio(5, 0, True, 2) + pio(5, 0, True, 2) +
          pio(5, 0, True, 0x80) + pio(5, 0, True, 0) +
          pio(5, 0, True, 1, 1) + pio(5, -1, True, 1) + pio(5, 1, True, 1) +
          pio(5, 0, True, 1) + pio(5, 0))
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


# ---- fuzz_boot: 5-byte header, then the kernel image ----
MIB = 1 << 20


def boot_header(ram=4, initrd_len=None, cmdline=1, half=False):
    flags = (1 if initrd_len is not None else 0) | cmdline << 1
    flags |= 16 if half else 0
    n = initrd_len or 0
    return bytes([ram, flags, n & 0xff, n >> 8 & 0xff, n >> 16])


def bzimage(body=4096, version=0x020f, setup_sects=4, init_size=2 * MIB,
            pref=MIB, cmdline_size=2047):
    """Setup sectors + body, with the x86 boot protocol header at 0x1f1."""
    img = bytearray((setup_sects + 1) * 512 + body)
    # struct x86_setup_header, packed, from setup_sects to init_size.
    hdr = struct.pack("<BHIHHHHHIHIHHBBHIIIIHBBIIIBBHIIQIIQQI",
                      setup_sects, 0, body // 16, 0, 0, 0, 0xaa55, 0x6aeb,
                      0x53726448, version, 0, 0, 0, 0, 0x01, 0, 0x100000,
                      0, 0, 0, 0, 0, 0, 0, 0x7fffffff, 0x200000, 1, 0,
                      0x3, cmdline_size, 0, 0, 0, 0, 0, pref, init_size)
    img[0x1f1:0x1f1 + len(hdr)] = hdr
    for i in range(body):
        img[(setup_sects + 1) * 512 + i] = (i * 7 + 3) & 0xff
    return bytes(img)


def elf_note(name, ntype, desc):
    n = name + b"\0"
    pad = lambda b: b + b"\0" * (-len(b) % 4)
    return struct.pack("<III", len(n), len(desc), ntype) + pad(n) + pad(desc)


def elf64_pvh(paddr=2 * MIB, filesz=0x800, memsz=0x1000, shnote=False):
    """ELF64: PT_LOAD at paddr, the PVH entry note in a PT_NOTE (or only in
    a SHT_NOTE section)."""
    notes = (elf_note(b"GNU", 3, b"\x11" * 8) +
             elf_note(b"Xen", 18, struct.pack("<Q", paddr + 0x10)))
    phoff, noteoff, dataoff = 64, 0x100, 0x200
    shoff = dataoff + filesz
    phnum = 1 if shnote else 2
    eh = struct.pack("<16sHHIQQQIHHHHHH",
                     b"\x7fELF\x02\x01\x01" + b"\0" * 9, 2, 62, 1,
                     paddr + 0x10, phoff, shoff if shnote else 0, 0, 64,
                     56, phnum, 64, 2 if shnote else 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 7, dataoff, paddr, paddr, filesz,
                       memsz, 0x1000)
    note = struct.pack("<IIQQQQQQ", 4, 4, noteoff, 0, 0, len(notes),
                       len(notes), 4)
    img = bytearray(shoff + (128 if shnote else 0))
    img[0:64] = eh
    img[phoff:phoff + 56] = load
    if not shnote:
        img[phoff + 56:phoff + 112] = note
    img[noteoff:noteoff + len(notes)] = notes
    if shnote:
        sh = struct.pack("<IIQQQQIIQQ", 0, 7, 0, 0, noteoff, len(notes),
                         0, 0, 4, 0)
        img[shoff + 64:shoff + 128] = sh
    return bytes(img)


def elf32_pvh(paddr=MIB):
    notes = elf_note(b"Xen", 18, struct.pack("<I", paddr))
    eh = struct.pack("<16sHHIIIIIHHHHHH",
                     b"\x7fELF\x01\x01\x01" + b"\0" * 9, 2, 3, 1, paddr,
                     52, 0, 0, 52, 32, 2, 40, 0, 0)
    load = struct.pack("<8I", 1, 0x100, paddr, paddr, 0x100, 0x2000, 7,
                       0x1000)
    note = struct.pack("<8I", 4, 0xc0, 0, 0, len(notes), len(notes), 4, 4)
    img = bytearray(0x200)
    img[0:52] = eh
    img[52:84] = load
    img[84:116] = note
    img[0xc0:0xc0 + len(notes)] = notes
    return bytes(img)


@target
def seeds_boot():
    write("fuzz_boot", "bzimage", boot_header() + bzimage())
    write("fuzz_boot", "bzimage-initrd",
          boot_header(ram=3, initrd_len=5000, cmdline=3) + bzimage())
    write("fuzz_boot", "bzimage-too-small",
          boot_header(ram=0) + bzimage(init_size=8 * MIB))
    write("fuzz_boot", "bzimage-proto-2.06",
          boot_header() + bzimage(version=0x0206))
    write("fuzz_boot", "bzimage-highmem",
          boot_header(ram=7, initrd_len=0x10000, half=True) + bzimage())
    write("fuzz_boot", "elf64-pvh", boot_header() + elf64_pvh())
    write("fuzz_boot", "elf64-pvh-shnote-initrd",
          boot_header(ram=4, initrd_len=0x3000) + elf64_pvh(shnote=True))
    write("fuzz_boot", "elf32-pvh", boot_header(ram=2) + elf32_pvh())


# ---- fuzz_mmio: 3-byte header, 8-byte ops, see fuzz_op() ----
def mmio_reg(off, value=None):
    """A 32-bit register access: a write when value is given."""
    kind = 0 if value is None else 4
    return struct.pack("<BHI", kind, off, value or 0) + b"\0"


def mmio_driver_ok(queues=1, qsize=256, features_hi=1, ring=0x1000):
    """The Linux virtio_mmio probe, then every queue set up, DRIVER_OK."""
    ops = [mmio_reg(0x000), mmio_reg(0x004), mmio_reg(0x008),
           mmio_reg(0x00c), mmio_reg(0x070, 0), mmio_reg(0x070, 1),
           mmio_reg(0x070, 3), mmio_reg(0x014, 0), mmio_reg(0x010),
           mmio_reg(0x014, 1), mmio_reg(0x010), mmio_reg(0x024, 0),
           mmio_reg(0x020, 0), mmio_reg(0x024, 1),
           mmio_reg(0x020, features_hi), mmio_reg(0x070, 11),
           mmio_reg(0x070)]
    for q in range(queues):
        base = ring + q * 0x3000
        ops += [mmio_reg(0x030, q), mmio_reg(0x044), mmio_reg(0x034),
                mmio_reg(0x038, qsize), mmio_reg(0x080, base),
                mmio_reg(0x084, 0), mmio_reg(0x090, base + 0x1000),
                mmio_reg(0x094, 0), mmio_reg(0x0a0, base + 0x2000),
                mmio_reg(0x0a4, 0), mmio_reg(0x044, 1)]
    ops.append(mmio_reg(0x070, 15))
    return b"".join(ops)


@target
def seeds_mmio():
    hdr = bytes([0, 7, 2])  # 1 queue, QueueNumMax 256, EVENT_IDX offered
    write("fuzz_mmio", "driver-ok", hdr + mmio_driver_ok())
    write("fuzz_mmio", "driver-ok-4q-kick-ack",
          bytes([3, 7, 2]) + mmio_driver_ok(4, 128) +
          mmio_reg(0x050, 2) + mmio_reg(0x050, 9) +
          struct.pack("<BBBI", 3, 1, 0, 0) + b"\0" +   # queue interrupt
          mmio_reg(0x060) + mmio_reg(0x064, 1) + mmio_reg(0x060))
    # Rewrites after DRIVER_OK, a NEEDS_RESET, then reset and again.
    write("fuzz_mmio", "rewrite-reset",
          hdr + mmio_driver_ok() + mmio_reg(0x038, 16) +
          mmio_reg(0x080, 0x5000) + mmio_reg(0x020, 0) +
          struct.pack("<BBBI", 3, 0, 0, 0) + b"\0" + mmio_reg(0x070) +
          mmio_reg(0x070, 0) + mmio_driver_ok())
    # Refused negotiation: no VERSION_1; queue size above the maximum.
    write("fuzz_mmio", "no-version-1", hdr + mmio_driver_ok(features_hi=0))
    write("fuzz_mmio", "queue-above-max",
          bytes([0, 3, 0]) + mmio_driver_ok(qsize=1024))
    # Odd widths below 0x100 and config space accesses of every width.
    odd = b"".join(struct.pack("<BHI", k, off, 0x12345678) + b"\x9a"
                   for k, off in ((1 | 4, 0x70), (1 | 8, 0x71),
                                  (1 | 16 | 4, 0x38), (1 | 24, 0xfc),
                                  (2 | 4, 0), (2 | 8, 1), (2 | 16, 4),
                                  (2 | 24 | 4, 0)))
    write("fuzz_mmio", "odd-widths-config", hdr + odd)


# ---- fuzz_pci: 2-byte header, 8-byte ops, see fuzz_op() ----
W1, W2, W4, W8 = 0, 16, 32, 48


def pci_op(kind, a=0, b=0, c=0, write=False, width=W4):
    return struct.pack("<BBHI", kind | (8 if write else 0) | width, a, b, c)


def pci_probe():
    """What Linux does: scan slots through 0xcf8, size and program BAR 0,
    enable memory decoding and bus mastering, walk the capabilities."""
    ops = [pci_op(0, dev, 0) for dev in range(4)]          # vendor/device
    ops += [pci_op(0, 1, 0x08), pci_op(0, 1, 0x0c), pci_op(0, 1, 0x2c),
            pci_op(0, 1, 0x34, width=W1)]
    ops += [pci_op(4, 0x80), pci_op(4, 0x40, 0, 0), pci_op(4, 6, 0, 0)]
    ops += [pci_op(2, 1, off) for off in range(0x40, 0x80, 4)]  # caps
    return b"".join(ops)


@target
def seeds_pci():
    hdr = bytes([1, 7])  # 2 queues, QueueNumMax 256
    write("fuzz_pci", "probe", hdr + pci_probe())
    # The PCI_CFG window: read num_queues, write status, read ISR.
    win = (pci_op(3, 0x01 | 0x10, 0x12) + pci_op(3, 0x00, 0x14, 1, True) +
           pci_op(3, 0x00, 0x1000) + pci_op(3, 0x82, 0x14))
    write("fuzz_pci", "window", hdr + pci_probe() + win)
    # BAR accesses: common config, notify, MSI-X table; then BAR moves.
    bar = (pci_op(5, 0, 0x12, width=W2) + pci_op(5, 0, 0x3004, 0, True) +
           pci_op(5, 0, 0x4000, 0xfee00000, True) +
           pci_op(5, 0, 0x400c, 0, True) + pci_op(5, 0, 0x5000) +
           pci_op(4, 6, 0, 0x8000) + pci_op(5, 0, 0x3000, 0, True) +
           pci_op(4, 0, 0, 0) + pci_op(5, 0, 0x12, width=W2))
    write("fuzz_pci", "bar-moves", hdr + pci_probe() + bar)
    # Odd ports and widths, ECAM beyond the slots, events.
    odd = (pci_op(1, 0, 2, 0x80000800, True) + pci_op(1, 0, 3, width=W2) +
           pci_op(1, 0, 7, width=W8) + pci_op(1, 0, 9, width=W4) +
           pci_op(2, 0x80, 0, 0x100000 - 4) + pci_op(2, 3, 0xffc) +
           pci_op(2, 1, 0x100, width=W8) + pci_op(7, 0, 0) +
           pci_op(7, 1, 0) + pci_op(7, 2, 0))
    write("fuzz_pci", "odd-accesses", hdr + odd)


# ---- fuzz_virtio_pci: 4-byte header, 8-byte ops, see fuzz_op() ----
def vp_common(field, value=None, part=0):
    """Common config field by index (0 dfselect .. 15 queue_used)."""
    w = value is not None
    return pci_op(0, field | part << 4 | 0x80, (value or 0) >> 32 & 0xffff,
                  (value or 0) & 0xffffffff, w)


def vp_driver_ok(queues=1, qsize=64, ring=0x1000):
    """virtio_pci_modern probe: features, queues, DRIVER_OK."""
    ops = [vp_common(6, 0), vp_common(6, 1), vp_common(6, 3),
           vp_common(0, 0), vp_common(1), vp_common(0, 1), vp_common(1),
           vp_common(2, 0), vp_common(3, 0), vp_common(2, 1),
           vp_common(3, 1), vp_common(6, 11), vp_common(6),
           vp_common(4, 0), vp_common(4), vp_common(5)]
    for q in range(queues):
        base = ring + q * 0x3000
        ops += [vp_common(8, q), vp_common(9), vp_common(9, qsize),
                vp_common(10, q + 1), vp_common(10), vp_common(12),
                vp_common(13, base), vp_common(14, base + 0x1000),
                vp_common(15, base + 0x2000), vp_common(11, 1)]
    ops.append(vp_common(6, 15))
    return b"".join(ops)


def vp_msix(entry, field, value=None):
    return pci_op(3, entry, field, value or 0, value is not None)


@target
def seeds_virtio_pci():
    hdr = bytes([1, 7, 2, 3])  # 2 queues, max 256, EVENT_IDX; BAR + MSI-X
    table = b"".join(vp_msix(v, 0, 0xfee00000) + vp_msix(v, 2, 0x4020 + v) +
                     vp_msix(v, 3, 0) for v in range(3))
    write("fuzz_virtio_pci", "driver-ok-msix",
          hdr + table + vp_driver_ok(2) + pci_op(2, 1, 0, 1, True) +
          pci_op(7, 0, 1) + pci_op(7, 1, 0) + vp_msix(1, 3))
    # Masked vectors pend in the PBA; unmasking delivers them.
    write("fuzz_virtio_pci", "mask-pba",
          hdr + vp_msix(1, 0, 0xfee00000) + vp_msix(1, 3, 1) +
          vp_driver_ok(1) + pci_op(7, 0, 0) + pci_op(4) +
          vp_msix(1, 3, 0) + pci_op(4) + pci_op(5, 0, 0, 0xc000, True) +
          pci_op(7, 0, 0) + pci_op(5, 1, 0, 0x8000, True))
    # INTx-less without MSI-X: the ISR only; reading it clears it.
    write("fuzz_virtio_pci", "isr", bytes([0, 7, 0, 1]) + vp_driver_ok() +
          pci_op(7, 0, 0) + pci_op(6, 0, 0, width=W1) +
          pci_op(6, 0, 0, width=W1) + pci_op(6, 1, 0, width=W8))
    # Narrow and odd accesses to common config; reset after DRIVER_OK.
    write("fuzz_virtio_pci", "parts-reset",
          hdr + vp_driver_ok() + vp_common(13, 0x9000, 2) +
          pci_op(0, 13 | 0x40 | 0x20, 0, 0, True) +
          pci_op(1, 0, 0x17, 0, True, W2) + pci_op(1, 0, 0xffe, 0, False, W4) +
          vp_common(6, 0) + vp_common(9) + vp_common(6, 1))


# ---- fuzz_blk: 6-byte header, 12-byte requests, see fuzz_build() ----
IN, OUT, FLUSH, GET_ID, DISCARD, WZ, BADTYPE, NOSTATUS = range(8)


def blk_hdr(size=0, align=0, ro=False, discard=True, wz=True, unsafe=False,
            qsize=4, event_idx=True, negotiate=6, fault_every=0, fault=0):
    b1 = align | (4 if ro else 0) | (8 if discard else 0)
    b1 |= (16 if wz else 0) | (32 if unsafe else 0)
    return bytes([size, b1, qsize, (1 if event_idx else 0) | negotiate,
                  fault_every, fault])


def blk_req(kind, sector=0, nbytes=4096, layout=0, seed=1, mis=0,
            flags=0):
    """nbytes: a multiple of 512 (or any value below 0x8000 as is)."""
    l16 = nbytes // 512 if nbytes % 512 == 0 and nbytes < 64 * 512 \
        else 0x8000 | nbytes
    return struct.pack("<BBIHBBBB", kind, layout, sector, l16, seed, mis,
                       flags, 0)


@target
def seeds_blk():
    each = (blk_req(OUT, 8, 4096, seed=3) + blk_req(IN, 8, 4096) +
            blk_req(FLUSH) + blk_req(GET_ID, 0, 512) +
            blk_req(DISCARD, 16, 1024) + blk_req(WZ, 24, 2048, flags=1) +
            blk_req(IN, 16, 1024) + blk_req(IN, 24, 2048))
    write("fuzz_blk", "each-type", blk_hdr() + each)
    # O_DIRECT with 4 KiB blocks: misaligned buffers bounce, sub-block
    # offsets and lengths go through read-modify-write.
    rmw = (blk_req(OUT, 1, 1536, layout=0x32, seed=5, mis=3) +
           blk_req(IN, 0, 4096, mis=1) +
           blk_req(OUT, 7, 512, seed=9) + blk_req(IN, 6, 2048, layout=2) +
           blk_req(OUT, 8, 8192, seed=2) + blk_req(IN, 8, 8192, mis=7))
    write("fuzz_blk", "direct-rmw", blk_hdr(align=2, qsize=5) + rmw)
    write("fuzz_blk", "direct-512",
          blk_hdr(size=2, align=1, qsize=2) + rmw)
    # Faults: short transfers, EINTR, EIO every few kernel calls.
    for kind in range(4):
        write("fuzz_blk", "faults-%d" % kind,
              blk_hdr(align=2, qsize=5, fault_every=3, fault=kind) + rmw)
    # Refused: beyond capacity, misaligned length, read-only, bad flags,
    # unknown type, no status byte.
    bad = (blk_req(OUT, 127, 1024) + blk_req(IN, 200) +
           blk_req(OUT, 0, 100) + blk_req(DISCARD, 0, 512, flags=1) +
           blk_req(WZ, 0, 512, flags=2) + blk_req(BADTYPE) +
           blk_req(NOSTATUS, 0, 512) + blk_req(NOSTATUS, 0, 0) +
           blk_req(IN, 128, 0) + blk_req(IN, 0, 0))
    write("fuzz_blk", "refused", blk_hdr() + bad)
    write("fuzz_blk", "readonly", blk_hdr(ro=True, unsafe=True) + each)
    write("fuzz_blk", "odd-size-no-direct",
          blk_hdr(size=3, align=2, negotiate=0) + each)


# ---- fuzz_http: limit selector, chunk seed, then the client's bytes ----
def http_in(stream, limit=4, seed=0):
    return bytes([limit, seed]) + stream


@target
def seeds_http():
    body = b'{"vcpu_count": 2, "mem_size_mib": 1024}'
    put = (b"PUT /machine-config HTTP/1.1\r\nHost: localhost\r\n"
           b"Accept: application/json\r\nContent-Type: application/json"
           b"\r\nContent-Length: %d\r\n\r\n" % len(body)) + body
    write("fuzz_http", "get", http_in(b"GET / HTTP/1.1\r\n\r\n"))
    write("fuzz_http", "put-body", http_in(put, seed=3))
    write("fuzz_http", "pipelined",
          http_in(put + b"\r\nGET /vm/config?x HTTP/1.1\r\n\r\n" +
                  b"PATCH /vm HTTP/1.0\r\nConnection: keep-alive\r\n"
                  b"Content-Length: 19\r\n\r\n{\"state\": \"Paused\"}",
                  seed=7))
    write("fuzz_http", "expect",
          http_in(b"PUT /drives/rootfs HTTP/1.1\r\nExpect: 100-continue"
                  b"\r\nContent-Length: 2\r\n\r\n{}", limit=2))
    write("fuzz_http", "over-limit", http_in(put, limit=3, seed=1))
    write("fuzz_http", "chunked",
          http_in(b"PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"))
    write("fuzz_http", "absolute",
          http_in(b"GET http://localhost/version HTTP/1.1\r\n"
                  b"Connection: close\r\n\r\n"))


# ---- fuzz_fc_config: NUL-separated requests: call, drive id, JSON body ----
FC_BOOT, FC_MACHINE, FC_MACHINE_PATCH, FC_DRIVE, FC_DRIVE_PATCH, \
    FC_LOGGER, FC_METRICS, FC_FILE = range(8)
FC_ROOTFS, FC_D1, FC_D_2, FC_X, FC_BAD_ID = range(5)


def fc_req(call, drive, body):
    # ASCII digits: a 0 byte would end the request (48 % 8 and 48 % 6
    # are 0, so '0' is call 0 and drive 0).
    return bytes([0x30 + call, 0x30 + drive]) + body.encode()


@target
def seeds_fc_config():
    def out(name, *reqs):
        write("fuzz_fc_config", name, b"\0".join(reqs))

    # firecracker-go-sdk's pre-boot sequence, then a drive patch.
    out("api_sequence",
        fc_req(FC_BOOT, FC_ROOTFS, '{"kernel_image_path":"/k","boot_args":'
               '"console=ttyS0 reboot=k panic=1 pci=off"}'),
        fc_req(FC_MACHINE, FC_ROOTFS, '{"vcpu_count":2,"mem_size_mib":1024,'
               '"smt":false,"track_dirty_pages":true}'),
        fc_req(FC_DRIVE, FC_ROOTFS, '{"drive_id":"rootfs","path_on_host":'
               '"/r.ext4","is_root_device":true,"is_read_only":false,'
               '"partuuid":"0eaa91a0-01"}'),
        fc_req(FC_DRIVE, FC_D1, '{"drive_id":"d1","path_on_host":"/d",'
               '"is_root_device":false,"cache_type":"Writeback",'
               '"io_engine":"Async","rate_limiter":{"bandwidth":{"size":'
               '1048576,"refill_time":100,"one_time_burst":4096},"ops":'
               '{"size":500,"refill_time":1000}}}'),
        fc_req(FC_DRIVE_PATCH, FC_D1, '{"drive_id":"d1","path_on_host":'
               '"/new","rate_limiter":{"ops":{"size":0,"refill_time":0}}}'),
        fc_req(FC_LOGGER, FC_ROOTFS, '{"log_path":"/l","level":"Debug",'
               '"show_level":true,"show_log_origin":false,"module":"api"}'),
        fc_req(FC_METRICS, FC_ROOTFS, '{"metrics_path":"/m","emit_id":true}'),
        fc_req(FC_MACHINE_PATCH, FC_ROOTFS, '{"vcpu_count":4}'))
    # Our own drive keys.
    out("ours",
        fc_req(FC_DRIVE, FC_D_2, '{"drive_id":"d_2","path_on_host":"/x",'
               '"is_root_device":false,"transport":"pci","queues":4,'
               '"queue_size":256,"engine":"io_uring","poll_us":32,'
               '"snapshot":true,"serial":"S1"}'),
        fc_req(FC_DRIVE, FC_X, '{"drive_id":"x","path_on_host":"/v",'
               '"is_root_device":true,"engine":"vhost","cache_type":"None"}'))
    # Firecracker's getting-started config file.
    out("config_file", fc_req(FC_FILE, FC_ROOTFS, json.dumps({
        "boot-source": {"kernel_image_path": "vmlinux.bin",
                        "boot_args": "console=ttyS0 reboot=k panic=1 pci=off",
                        "initrd_path": None},
        "drives": [{"drive_id": "rootfs", "partuuid": None,
                    "is_root_device": True, "cache_type": "Unsafe",
                    "is_read_only": False, "path_on_host": "ubuntu.ext4",
                    "io_engine": "Sync", "rate_limiter": None,
                    "socket": None}],
        "machine-config": {"vcpu_count": 2, "mem_size_mib": 1024,
                           "smt": False, "track_dirty_pages": False,
                           "huge_pages": "None"},
        "cpu-config": None, "balloon": None, "network-interfaces": [],
        "vsock": None, "logger": None, "metrics": None,
        "mmds-config": None, "entropy": None}, indent=1)))
    # Network interfaces in a config file (there is no call of their own).
    out("config_file_net", fc_req(FC_FILE, FC_ROOTFS, json.dumps({
        "boot-source": {"kernel_image_path": "vmlinux.bin"},
        "network-interfaces": [
            {"iface_id": "eth0", "host_dev_name": "tap0",
             "guest_mac": "06:00:AC:10:00:02", "rx_rate_limiter": None,
             "tx_rate_limiter": {"bandwidth": {"size": 1048576,
                                               "refill_time": 100}}},
            {"iface_id": "eth1", "host_dev_name": "tap1", "queues": 4,
             "transport": "pci",
             "rx_rate_limiter": {"ops": {"size": 1000, "refill_time": 1000,
                                         "one_time_burst": 10}}}]},
        indent=1)))
    # A second root device is refused, on a new id or an existing one.
    root = ('{"drive_id":"%s","path_on_host":"/r","is_root_device":true}')
    out("two_roots",
        fc_req(FC_DRIVE, FC_ROOTFS, root % "rootfs"),
        fc_req(FC_DRIVE, FC_D1, root.replace("true", "false") % "d1"),
        fc_req(FC_DRIVE, FC_D1, root % "d1"),
        fc_req(FC_DRIVE, FC_D_2, root % "d_2"),
        fc_req(FC_FILE, FC_ROOTFS, '{"drives":[%s,%s]}' %
               (root % "a", root % "b")))
    out("bad",
        fc_req(FC_MACHINE, FC_ROOTFS, '{"vcpu_count":-1,"mem_size_mib":'
               '99999999999999999999}'),
        fc_req(FC_DRIVE, FC_BAD_ID, '{"drive_id":"bad-id","path_on_host":'
               '"/x","is_root_device":false}'),
        fc_req(FC_FILE, FC_ROOTFS, '{"network-interfaces":[{"iface_id":'
               '"eth0"}],"drives":{}}'),
        fc_req(FC_BOOT, FC_ROOTFS, '{"kernel_image_path":"a\\u0000b"}'))


def main(argv):
    names = argv[1:] or sorted(GENERATORS)
    for n in names:
        GENERATORS[n]()


if __name__ == "__main__":
    main(sys.argv)
