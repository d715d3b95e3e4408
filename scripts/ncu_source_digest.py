#!/usr/bin/env python3
"""Digest of Nsight Compute source pages (scripts/gpu-profile.sh INGOT_NCU_SOURCE=1: ncu-source.tar.gz, or one
src-N.csv): per kernel, the warp instructions executed, the stall samples by reason, each opcode's share of both, and
(--hot N) the N instructions with the most stall samples; (--shared) every instruction that touches shared memory with
its wavefronts and their ideal, divided by --per (e.g. work-groups x bands, to read them per band).

Usage: python3 scripts/ncu_source_digest.py ncu-source.tar.gz [--hot 40] [--shared] [--per 10752]
"""
import argparse
import collections
import csv
import io
import re
import sys
import tarfile


def pages(path):
    """(name, csv text) of each source page in a tarball, or of one CSV file."""
    if path.endswith((".tar.gz", ".tgz")):
        with tarfile.open(path) as t:
            for m in sorted(t.getmembers(), key=lambda m: m.name):
                if re.search(r"src-\d+\.csv$", m.name):
                    yield m.name, t.extractfile(m).read().decode(errors="replace")
    else:
        yield path, open(path, errors="replace").read()


def num(v):
    try:
        return float(v.replace(",", ""))
    except ValueError:
        return 0.0


def digest(name, text, args):
    rows = list(csv.reader(io.StringIO(text)))
    start = next((i for i, r in enumerate(rows) if "Source" in r and "Address" in r), None)
    if start is None:
        print(f"== {name}: no source table (was the page exported with --page source --csv?)")
        return
    kernel = next((r[1] for r in rows[:start] if r and r[0] == "Kernel Name" and len(r) > 1), "?")
    hdr = rows[start]
    col = {h: i for i, h in enumerate(hdr)}
    data = [r for r in rows[start + 1:] if len(r) == len(hdr)]
    ex, st = col.get("Instructions Executed"), col.get("Warp Stall Sampling (All Samples)")
    if ex is None or st is None:
        print(f"== {name} ({kernel}): the page lacks executions or stall samples (collect SourceCounters)")
        return
    te = sum(num(r[ex]) for r in data) or 1.0
    ts = sum(num(r[st]) for r in data) or 1.0
    print(f"== {name}: {kernel}: {len(data)} SASS instructions, {te:.0f} warp instructions executed, "
          f"{ts:.0f} stall samples")
    reasons = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    totals = sorted(((sum(num(r[col[h]]) for r in data), h[6:]) for h in reasons), reverse=True)
    print("stall samples by reason: " + ", ".join(f"{h} {100 * v / ts:.1f}%" for v, h in totals if v >= 0.005 * ts))
    by_ex, by_st = collections.Counter(), collections.Counter()
    for r in data:
        m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_]+)", r[col["Source"]])
        op = m.group(2) if m else "?"
        by_ex[op] += num(r[ex])
        by_st[op] += num(r[st])
    print("opcode      executed%  stall%")
    for op, v in by_ex.most_common(25):
        print(f"  {op:10s} {100 * v / te:8.1f} {100 * by_st[op] / ts:7.1f}")
    if args.hot:
        print(f"the {args.hot} instructions with the most stall samples (index, executions, samples%, SASS)")
        for i, r in sorted(enumerate(data), key=lambda x: -num(x[1][st]))[: args.hot]:
            print(f"  {i:5d} {num(r[ex]):10.0f} {100 * num(r[st]) / ts:6.2f}%  {r[col['Source']].strip()[:80]}")
    wf, ideal = col.get("L1 Wavefronts Shared"), col.get("L1 Wavefronts Shared Ideal")
    if args.shared and wf is not None and ideal is not None:
        tw = sum(num(r[wf]) for r in data)
        ti = sum(num(r[ideal]) for r in data)
        print(f"shared-memory wavefronts {tw:.0f} (ideal {ti:.0f}); per {args.per:g}: index, wavefronts (ideal), SASS")
        for i, r in enumerate(data):
            if num(r[wf]) > 0:
                print(f"  {i:5d} {num(r[wf]) / args.per:9.1f} ({num(r[ideal]) / args.per:9.1f})  "
                      f"{r[col['Source']].strip()[:70]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="ncu-source.tar.gz or a src-N.csv")
    ap.add_argument("--hot", type=int, default=0, help="list the N instructions with the most stall samples")
    ap.add_argument("--shared", action="store_true", help="list the shared-memory wavefronts per instruction")
    ap.add_argument("--per", type=float, default=1.0, help="divide the wavefronts by this (e.g. work-groups x bands)")
    args = ap.parse_args()
    found = False
    for name, text in pages(args.path):
        found = True
        digest(name, text, args)
    if not found:
        sys.exit(f"{args.path}: no source page (src-N.csv) in it")


if __name__ == "__main__":
    main()
