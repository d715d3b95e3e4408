#!/usr/bin/env python3
"""Where a kernel's global loads, barriers, matrix loads and mma land in its sm_90 machine code, on a machine without
cuobjdump or nvdisasm (this repository's CPU machines): nvcc compiles the CUDA print to a cubin and to PTX; each 16-byte
instruction of the cubin's .text section is named by the low 12 bits of its first word (the opcode class of sm_80 and
sm_90 SASS, as cuobjdump names them: a table of the few classes this prints, not a disassembler), runs of one class
are folded, and the classes' counts are printed beside the PTX instructions they come from, so that a table entry that
no longer holds shows as a mismatch. On a machine with the toolkit, scripts/gpu-sass.sh gives the real listing.

usage: scripts/sass-outline.py KERNEL.cu [--arch sm_90]
       (KERNEL.cu from `ingot inspect K --case C --dtype D --stage cuda --set k=v ...`)
"""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# opcode class (low 12 bits of the instruction's first 64-bit word) -> name; the PTX instruction it comes from
CLASSES = {
    0x981: ("LDG", r"\bld\.global"),
    0x986: ("STG", r"\bst\.global"),
    0xB1D: ("BAR", r"\bbar\.sync|\bbarrier\.sync"),
    0x23C: ("HMMA", r"\bmma\.sync"),
    0x83B: ("LDSM", r"\bldmatrix"),
    0xFAE: ("LDGSTS", r"\bcp\.async\.c[ag]"),
    0x9AF: ("LDGDEPBAR", r"\bcp\.async\.commit_group"),
    0x91A: ("DEPBAR", r"\bcp\.async\.wait_group"),
    0x388: ("STS", None),
    0x984: ("LDS", None),
    0x387: ("STL", None),
    0x983: ("LDL", None),
    0x947: ("BRA", None),
    0x94D: ("EXIT", None),
}


def text_section(cubin):
    """The bytes of the first .text.* section of an ELF64 cubin."""
    b = open(cubin, "rb").read()
    shoff = struct.unpack_from("<Q", b, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]

    def name(off):
        return b[names + off : b.index(b"\0", names + off)].decode()

    for s in secs:
        if name(s[0]).startswith(".text."):
            return name(s[0])[len(".text.") :], b[s[4] : s[4] + s[5]]
    sys.exit(f"{cubin}: no .text section")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source")
    ap.add_argument("--arch", default="sm_90")
    a = ap.parse_args()
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    with tempfile.TemporaryDirectory() as d:
        cubin, ptx = os.path.join(d, "k.cubin"), os.path.join(d, "k.ptx")
        for kind, path in (("-cubin", cubin), ("-ptx", ptx)):
            r = subprocess.run([nvcc, kind, f"-arch={a.arch}", "-Xptxas", "-v", "-o", path, a.source],
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit(r.stderr)
            if kind == "-cubin":
                print("\n".join(l for l in r.stderr.splitlines() if "registers" in l or "spill" in l))
        kernel, text = text_section(cubin)
        ptx_text = open(ptx).read()
    ops = [struct.unpack_from("<Q", text, i)[0] & 0xFFF for i in range(0, len(text), 16)]
    print(f"{kernel}: {len(ops)} instructions")
    # "@i CLASS xN": N instructions of CLASS from instruction i on, with no other class of the table between them
    outline, prev, run, start = [], None, 0, 0
    for i, op in enumerate(ops + [None]):
        cls = CLASSES[op][0] if op in CLASSES else ("end" if op is None else None)
        if cls is None:
            continue
        if cls == prev:
            run += 1
            continue
        if prev is not None:
            outline.append(f"@{start} {prev}" + (f" x{run}" if run > 1 else ""))
        prev, run, start = cls, 1, i
    print("  " + "  ".join(outline))
    counts = collections.Counter(CLASSES[op][0] for op in ops if op in CLASSES)
    print("class      SASS  PTX")
    for op, (cls, pattern) in CLASSES.items():
        n_ptx = len(re.findall(pattern, ptx_text)) if pattern else None
        flag = "" if n_ptx is None or n_ptx == counts[cls] else "   (differs: merged or split by ptxas, or the table)"
        print(f"{cls:<10} {counts[cls]:>4}  {'' if n_ptx is None else n_ptx}{flag}")


if __name__ == "__main__":
    main()
