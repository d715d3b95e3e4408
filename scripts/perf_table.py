#!/usr/bin/env python3
"""Turns a baseline JSON from `ingot bench --json`/`ingot snap` into the markdown table of
docs/performance.md.  usage: scripts/perf_table.py baseline.json"""
import json
import sys

b = json.load(open(sys.argv[1]))
c = b["ceilings"]
print(f"Device: {b['device']}; commit `{b['commit']}`; measured {b['date']}.")
print(f"Ceilings measured in the same run: copy {c['copy_bytes_per_s'] / 1e12:.2f} TB/s ({c['copy_method']}); "
      f"f32 FMA {c['f32_flops_per_s'] / 1e12:.1f} TFLOP/s ({c['fma_method']}).")
print()
print("| kernel | dtype | case | ingot ms | GB/s | % copy | % same | TFLOP/s | % f32 FMA | cuDNN ms | cuDNN / ingot | waves | reference |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for r in b["rows"]:
    if r.get("skipped"):
        print(f"| {r['kernel']} | {r['dtype']} | {r['case']} | skipped: {r['skipped']} | | | | | | | | | |")
        continue
    ref = f"{r['reference_s'] * 1e3:.4f}" if "reference_s" in r else "-"
    ratio = f"{r['ratio_reference_over_ingot']:.2f}x" if "ratio_reference_over_ingot" in r else "-"
    # % same: a copy of the same bytes timed the same way (baselines since 2026-12-02), over this time
    same = f"{100 * r['frac_same_copy']:.1f}%" if r.get("frac_same_copy") else "-"
    # waves: work-groups / (resident per SM x SMs) (baselines since 2026-12-05, CUDA)
    waves = f"{r['waves']:.2f}" if r.get("waves") else "-"
    print(f"| {r['kernel']} | {r['dtype']} | {r['case']} | {r['median_s'] * 1e3:.4f} | {r['gbytes_per_s']:.0f} | "
          f"{100 * r['frac_copy']:.1f}% | {same} | {r['tflops']:.2f} | {100 * r['frac_fma']:.1f}% | {ref} | {ratio} | "
          f"{waves} | {r.get('reference_note', '')} |")
