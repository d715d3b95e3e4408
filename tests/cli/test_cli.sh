#!/usr/bin/env bash
# End-to-end tests of the ingot CLI: every command, and each bad-input path gives a clear
# message and a non-zero exit (never a crash). Usage: test_cli.sh path/to/ingot
set -uo pipefail
ingot=${1:?usage: test_cli.sh path/to/ingot}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
pass=0; fail=0

# expect NAME WANT_RC PATTERN -- command...   (PATTERN is an extended regex over stdout+stderr)
expect() {
  local name=$1 want_rc=$2 pattern=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $want_rc == nonzero ]]; then [[ $rc -ne 0 ]] && rc_ok=1 || rc_ok=0; else [[ $rc -eq $want_rc ]] && rc_ok=1 || rc_ok=0; fi
  if [[ $rc_ok -eq 1 && $rc -lt 128 ]] && grep -Eq -- "$pattern" <<<"$out"; then
    pass=$((pass+1)); echo "PASS $name"
  else
    fail=$((fail+1)); echo "FAIL $name (rc=$rc, wanted $want_rc and /$pattern/)"; sed 's/^/    /' <<<"$out" | tail -15
  fi
}

# npy FILE DESCR PERL_PACK_FORMAT VALUES... : writes a 1-D .npy file with perl (always on Debian)
npy() {
  local file=$1 descr=$2 fmt=$3; shift 3
  perl -e '
    my ($file, $descr, $fmt, @v) = @ARGV;
    my $h = "{'"'"'descr'"'"': '"'"'$descr'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (" . scalar(@v) . ",), }";
    my $total = 10 + length($h) + 1; $h .= " " x ((64 - $total % 64) % 64); $h .= "\n";
    open(my $f, ">:raw", $file) or die; print $f "\x93NUMPY\x01\x00" . pack("v", length($h)) . $h . pack("$fmt*", @v); close $f;' \
    "$file" "$descr" "$fmt" "$@"
}
payload() { perl -e 'local $/; open(my $f, "<:raw", $ARGV[0]) or die; my $d = <$f>; my $hl = unpack("v", substr($d, 8, 2)); print unpack("H*", substr($d, 10 + $hl));' "$1"; }

expect version 0 '^ingot [0-9]+\.[0-9]+\.[0-9]+' -- "$ingot" --version
expect help 0 'Examples:' -- "$ingot" test --help
expect help_long 0 '--long +Also run, on a CPU OpenCL device' -- "$ingot" test --help
expect no_command nonzero 'subcommand' -- "$ingot"
expect list 0 'depthwise_conv1d +conv +f32,f16,bf16' -- "$ingot" list
expect list_json 0 '"name": "depthwise_conv1d"' -- "$ingot" list --json
expect list_options 0 '^  shfl +\[0, 1\]' -- "$ingot" list --options --filter 'depthwise_conv1d$'
expect list_options_json 0 '"name": "shfl"' -- "$ingot" list --json --filter 'depthwise_conv1d$'
expect set_option_out_of_range nonzero 'V = 99.*\[1, 64\]' -- "$ingot" inspect depthwise_conv1d --set V=99 --stage ir
expect test_interp 0 '^[0-9]+ passed, 0 failed, 0 skipped$' -- "$ingot" test --backend interp --filter depthwise --dtype f16
# (Two small kernels: the unit tests check the whole library on each backend.)
expect test_all_counts 0 'interp +[0-9]+ passed, 0 failed, 0 skipped' -- "$ingot" test --backend all --dtype f32 --filter depthwise_conv1d,causal_conv1d_update
expect test_json 0 'passed' -- "$ingot" test --backend interp --dtype bf16 --json "$work/r.json"
expect test_json_file 0 '"status": "pass"' -- cat "$work/r.json"
expect test_bad_backend 2 "unknown backend 'foo'" -- "$ingot" test --backend foo
expect test_bad_filter 2 "matches no kernel" -- "$ingot" test --filter no_such_kernel
expect build_bad_filter 2 "matches no kernel" -- "$ingot" build --backend opencl --out "$work/no_such" --filter no_such_kernel
expect bench_bad_filter 2 "matches no kernel" -- "$ingot" bench --backend interp --filter no_such_kernel
expect test_bad_dtype 2 "unknown dtype 'f64'" -- "$ingot" test --dtype f64
expect inspect_unknown 2 "unknown kernel 'nope'" -- "$ingot" inspect nope
expect inspect_all 0 '=== simplify' -- "$ingot" inspect depthwise_conv1d --stage all
expect inspect_cuda 0 '__global__ void __launch_bounds__\(256, 8\) depthwise_conv1d_f16' -- "$ingot" inspect depthwise_conv1d --dtype f16 --stage cuda
expect inspect_msl 0 'kernel void depthwise_conv1d_bf16' -- "$ingot" inspect depthwise_conv1d --dtype bf16 --stage msl --set K=5
expect inspect_bad_stage 2 "unknown --stage 'bogus'" -- "$ingot" inspect depthwise_conv1d --stage bogus
expect inspect_bad_set 2 "bad --set 'K'" -- "$ingot" inspect depthwise_conv1d --set K
expect inspect_unknown_param 2 "has no parameter 'Q'" -- "$ingot" inspect depthwise_conv1d --set Q=1
expect inspect_optional_param 0 'acc1_0' -- "$ingot" inspect depthwise_conv2d --set VH=2 --stage cuda
expect inspect_non_integer 2 "must be an integer" -- "$ingot" inspect depthwise_conv1d --set K=abc
expect inspect_impossible_shape 2 "cannot build depthwise_conv1d" -- "$ingot" inspect depthwise_conv1d --set K=0
# --stage resources: NVRTC + ptxas's report where NVRTC exists (no GPU needed), else a clear error
expect inspect_arch_without_resources 2 '--arch applies to --stage resources' -- "$ingot" inspect depthwise_conv1d --stage cuda --arch sm_80
if "$ingot" inspect depthwise_conv1d --stage resources > /dev/null 2>&1; then
  expect inspect_resources 0 'ptxas info +: Used [0-9]+ registers' -- "$ingot" inspect depthwise_conv1d --dtype f16 --stage resources
  expect inspect_resources_occupancy 0 'launch: [0-9]+ work-groups = [0-9.e-]+ waves on 132 SMs' -- "$ingot" inspect depthwise_conv1d --dtype f16 --stage resources
  expect inspect_resources_options 0 'options: --gpu-architecture=sm_80 .*--ptxas-options=-v' -- "$ingot" inspect depthwise_conv1d --stage resources --arch sm_80
  expect inspect_resources_bad_arch 1 'does not support sm_9 ' -- "$ingot" inspect depthwise_conv1d --stage resources --arch sm_9
  expect inspect_resources_ptx_arch 2 'needs a real architecture, sm_XY' -- "$ingot" inspect depthwise_conv1d --stage resources --arch compute_90
else
  expect inspect_resources_no_nvrtc 2 '--stage resources compiles with NVRTC: cuda not available' -- "$ingot" inspect depthwise_conv1d --stage resources
fi
expect inspect_unknown_case 2 "has no case 'zzz'" -- "$ingot" inspect depthwise_conv1d --case zzz
expect inspect_wrong_dtype 2 "has no i32 variant" -- "$ingot" inspect depthwise_conv1d --dtype i32
# (One kernel's variants: compile.library_sources builds and compiles the whole library.)
expect build_all 0 'wrote [0-9]+ files' -- "$ingot" build --backend all --out "$work/out" --filter depthwise_conv1d
expect build_manifest 0 '"target": "msl"' -- cat "$work/out/manifest.json"
expect build_bad_target 2 "unknown build target 'vulkan'" -- "$ingot" build --backend vulkan --out "$work/o2"
expect build_needs_out nonzero '--out is required' -- "$ingot" build --backend cuda
expect device 0 'interp: available' -- "$ingot" device
expect device_json 0 '"backend": "interp"' -- "$ingot" device --json
# GLSL: the .comp and, where shaderc is built in, its SPIR-V; the stage; Vulkan's line in `ingot device` (available, or
# absent with the reason).
expect build_glsl 0 'wrote [0-9]+ files' -- "$ingot" build --backend glsl --out "$work/glsl" --filter silu
expect build_glsl_comp 0 'silu_f32.*\.comp' -- ls "$work/glsl"
if "$ingot" device | grep -q '^vulkan: available'; then
  expect build_glsl_spv 0 'silu_f32.*\.spv' -- ls "$work/glsl"
  expect device_vulkan_bad_filter 0 '^vulkan: absent — vulkan not available: no device matches' -- env INGOT_VULKAN_DEVICE=no-such-gpu "$ingot" device
  expect spv_validates 0 '' -- bash -c "for f in '$work'/glsl/*.spv; do spirv-val --target-env vulkan1.2 \"\$f\" || exit 1; done"
fi
expect inspect_glsl 0 '#version 450' -- "$ingot" inspect silu --stage glsl
expect device_vulkan 0 '^vulkan: (available|absent — vulkan not available: )' -- "$ingot" device

# run: a K=1 convolution with unit weights is the identity, so y.npy must hold x's values.
vals=(); for i in $(seq 0 71); do vals+=("$i.25"); done
npy x.npy '<f4' 'f<' "${vals[@]}"
npy w.npy '<f4' 'f<' 1 1 1 1
expect run_f32 0 'wrote y: 72 x f32' -- "$ingot" run depthwise_conv1d --backend interp --dtype f32 --case k1 --in x=x.npy --in w=w.npy --out y=y.npy
if [[ -f y.npy && $(payload y.npy) == $(payload x.npy) ]]; then pass=$((pass+1)); echo "PASS run_roundtrip_values"; else fail=$((fail+1)); echo "FAIL run_roundtrip_values"; fi
hvals=(); for i in $(seq 0 71); do hvals+=(15360); done   # f16 1.0 = 0x3c00
npy xh.npy '<f2' 'v' "${hvals[@]}"
npy wh.npy '<f2' 'v' 16384 16384 16384 16384              # f16 2.0
expect run_f16 0 'wrote y: 72 x f16' -- "$ingot" run depthwise_conv1d --backend interp --dtype f16 --case k1 --in x=xh.npy --in w=wh.npy --out y=yh.npy
if [[ $(payload yh.npy) == $(perl -e 'print unpack("H*", pack("v*", (16384) x 72))') ]]; then pass=$((pass+1)); echo "PASS run_f16_values"; else fail=$((fail+1)); echo "FAIL run_f16_values"; fi
expect run_bf16_reads_f32_files 0 'wrote y: 72 x bf16' -- "$ingot" run depthwise_conv1d --dtype bf16 --case k1 --in x=x.npy --in w=w.npy --out y=yb.npy
expect run_bf16_writes_f32 0 "'descr': '<f4'" -- grep -a -o "'descr': '<f4'" yb.npy
expect run_missing_file 1 'cannot open file' -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=missing.npy --in w=w.npy
printf 'not numpy at all' > junk.npy
expect run_malformed 1 'not a NumPy .npy file' -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=junk.npy --in w=w.npy
head -c 200 x.npy > trunc.npy
expect run_truncated 1 'truncated or corrupt' -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=trunc.npy --in w=w.npy
npy short.npy '<f4' 'f<' 1 2 3
expect run_wrong_shape 2 "buffer 'x' needs 72 elements" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=short.npy --in w=w.npy
expect run_wrong_dtype 1 "file holds '<f2' but a f32 buffer needs '<f4'" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=xh.npy --in w=w.npy
expect run_too_small_after_set 2 "buffer 'x' needs 144 elements" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --set B=4 --in x=x.npy --in w=w.npy
expect run_missing_input 2 "input buffer 'w' needs --in w=FILE.npy" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=x.npy
expect run_unknown_buffer 2 "'q', which is not an input buffer" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in q=x.npy
expect run_in_as_out 2 "'x', which is not an output buffer" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=x.npy --in w=w.npy --out x=o.npy
expect run_bad_in_syntax 2 "write BUFFER=FILE.npy" -- "$ingot" run depthwise_conv1d --dtype f32 --in x
expect run_needs_dtype nonzero 'dtype' -- "$ingot" run depthwise_conv1d
expect run_two_backends 2 'exactly one backend' -- "$ingot" run depthwise_conv1d --dtype f32 --backend interp,opencl --in x=x.npy --in w=w.npy
# a row kernel: eps is a real scalar carried by eps_nano (x 1e-9); a zero width or row count, or a buffer of another
# size, is refused with the kernel's reason before anything runs
npy wn.npy '<f4' 'f<' 1 1 1 1 1 1 1 1 1
norm=(rmsnorm --dtype f32 --set residual=0 --set gated=0 --set eps_nano=1000 --in x=x.npy --in w=wn.npy)
expect run_rmsnorm 0 'wrote y: 72 x f32' -- "$ingot" run "${norm[@]}" --set R=8 --set D=9 --out y=yn.npy
expect run_rmsnorm_d0 2 'D = 0 must be in \[1, 65536\]' -- "$ingot" run "${norm[@]}" --set R=8 --set D=0
expect run_rmsnorm_r0 2 'R = 0 must be >= 1' -- "$ingot" run "${norm[@]}" --set R=0 --set D=9
expect run_rmsnorm_wrong_size 2 "buffer 'x' needs 36 elements" -- "$ingot" run "${norm[@]}" --set R=4 --set D=9

# bench, snap, diff (timings on the interpreter are meaningless; the commands are not)
expect bench_emit_cases 0 'wrote the bench cases' -- "$ingot" bench --emit-cases cases.json
expect bench_cases_file 0 '"key": "depthwise_conv1d\|f32\|' -- cat cases.json
expect bench_too_big 1 'skipped: needs about' -- "$ingot" bench --backend interp --filter depthwise --dtype f32 --max-bytes 1000
expect bench_bad_reps 2 'reps must be' -- "$ingot" bench --backend interp --reps 0
expect bench_variant 1 'B4_C512_L65536_K3_s2\+V=2,minb=2 skipped: needs about' -- "$ingot" bench --backend interp --filter 'depthwise_conv1d$' --dtype f32 --cases '^B4_C512_L65536_K3_s2$' --variant V=2,minb=2 --max-bytes 1000
expect bench_variant_unknown_key 2 "has no parameter 'PB'" -- "$ingot" bench --backend interp --filter 'depthwise_conv1d$' --variant PB=2
expect bench_variant_not_integer 2 "bad --variant 'V=x'" -- "$ingot" bench --backend interp --variant V=x
expect bench_check 1 'check: 0 of 0 rows against the CPU oracle failed' -- "$ingot" bench --backend interp --filter 'depthwise_conv1d$' --dtype f32 --check --max-bytes 1000
expect bench_two_backends 2 'exactly one backend' -- "$ingot" bench --backend interp,opencl
expect snap_needs_out nonzero '--out is required' -- "$ingot" snap --backend interp
cat > a.json <<'J'
{"device": "d", "commit": "a", "date": "x", "rows": [{"key": "k|f32|c", "median_s": 0.002, "skipped": ""}, {"key": "k|f32|e", "median_s": 0.001, "skipped": ""}]}
J
cat > b.json <<'J'
{"device": "d", "commit": "b", "date": "y", "rows": [{"key": "k|f32|c", "median_s": 0.003, "skipped": ""}, {"key": "k|f32|e", "median_s": 0.0005, "skipped": ""}]}
J
expect diff_lists 0 '1 regressions, 1 gains, 0 unchanged' -- "$ingot" diff a.json b.json
expect diff_strict 1 'regression +k\|f32\|c' -- "$ingot" diff a.json b.json --strict
expect diff_missing_file 2 "cannot read 'nope.json'" -- "$ingot" diff a.json nope.json

# Outputs are checked before the work starts, and every write is checked (a full disk is not a success).
expect build_unwritable_out 2 "--out folder '/proc' is not writable" -- "$ingot" build --backend opencl --out /proc --filter depthwise_conv1d
expect emit_cases_missing_folder 2 "the folder 'nodir' does not exist" -- "$ingot" bench --emit-cases nodir/cases.json
expect test_json_full_disk 1 "writing '/dev/full' failed" -- "$ingot" test --backend interp --filter causal_conv1d_update --dtype f32 --json /dev/full
expect run_out_full_disk 1 "/dev/full: write failed" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=x.npy --in w=w.npy --out y=/dev/full
expect run_out_missing_folder 2 "the folder 'nodir' does not exist" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=x.npy --in w=w.npy --out y=nodir/y.npy
# diff: thresholds that are not a finite relative change, corrupt documents named, duplicate keys, bad medians
expect diff_threshold_nan 2 "threshold must be a finite" -- "$ingot" diff a.json b.json --threshold nan
expect diff_threshold_negative 2 "threshold must be a finite" -- "$ingot" diff a.json b.json --threshold -0.1
printf '{"rows": [' > corrupt.json
expect diff_corrupt_named 2 "corrupt.json is not valid JSON" -- "$ingot" diff a.json corrupt.json
cat > dup.json <<'J'
{"rows": [{"key": "k|f32|c", "median_s": 0.002}, {"key": "k|f32|c", "median_s": 0.003}]}
J
expect diff_duplicate_key 2 "row key 'k\|f32\|c' appears twice" -- "$ingot" diff a.json dup.json
cat > neg.json <<'J'
{"rows": [{"key": "k|f32|c", "median_s": -0.002}]}
J
expect diff_negative_median 2 "median_s must be finite and positive" -- "$ingot" diff a.json neg.json
# run's inputs: each buffer once, the declared shape, real dimensions, regular files
expect run_duplicate_in 2 "names buffer 'x' twice" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=x.npy --in x=x.npy --in w=w.npy
perl -e '
  my $h = "{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (9, 4, 2), }";
  my $total = 10 + length($h) + 1; $h .= " " x ((64 - $total % 64) % 64); $h .= "\n";
  open(my $f, ">:raw", "xt.npy") or die; print $f "\x93NUMPY\x01\x00" . pack("v", length($h)) . $h . pack("f<*", (1) x 72); close $f;'
expect run_transposed_shape 2 "holds shape \(9, 4, 2\)" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=xt.npy --in w=w.npy
perl -e '
  my $h = "{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (-1,), }";
  my $total = 10 + length($h) + 1; $h .= " " x ((64 - $total % 64) % 64); $h .= "\n";
  open(my $f, ">:raw", "neg.npy") or die; print $f "\x93NUMPY\x01\x00" . pack("v", length($h)) . $h . pack("f<", 1); close $f;'
expect run_negative_dimension 1 "not a non-negative integer" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=neg.npy --in w=w.npy
expect run_device_file 1 "/dev/zero: not a regular file" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=/dev/zero --in w=w.npy
expect run_directory 1 "not a regular file" -- "$ingot" run depthwise_conv1d --dtype f32 --case k1 --in x=. --in w=w.npy
# run starts from the library's defaults: the shape from --set, no test case's options; a missing key is named
expect run_from_defaults 0 'wrote y: 72 x f32' -- "$ingot" run depthwise_conv1d --dtype f32 --set B=2 --set C=4 --set L=9 --set K=1 --set stride=1 --set pad=0 --set dilation=1 --set bias=0 --in x=x.npy --in w=w.npy --out y=yd.npy
if [[ -f yd.npy && $(payload yd.npy) == $(payload x.npy) ]]; then pass=$((pass+1)); echo "PASS run_from_defaults_values"; else fail=$((fail+1)); echo "FAIL run_from_defaults_values"; fi
expect run_missing_shape 2 "parameter 'bias' is missing" -- "$ingot" run depthwise_conv1d --dtype f32 --set B=1 --set C=2
expect run_unknown_parameter 2 "has no parameter 'Q'" -- "$ingot" run depthwise_conv1d --dtype f32 --set Q=1
# bench --variant: a value the kernel refuses is an error before anything is measured
expect bench_variant_refused_up_front 2 "--variant V=3: depthwise_conv1d" -- "$ingot" bench --backend interp --filter 'depthwise_conv1d$' --all-variants --variant V=3
expect device_measure 0 '^cuda: (not measured \(cuda not available|ceilings on cuda)|^ceilings on cuda' -- "$ingot" device --measure

# prove: the result cache (a folder of its own), a corrupt or truncated entry proved again and rewritten
pc=(env INGOT_CACHE_DIR="$work/pcache")
if "$ingot" prove silu --dtype f32 --no-cache 2>&1 | grep -q 'built without Z3'; then
  expect prove_without_z3 1 'built without Z3.*install libz3-dev' -- "$ingot" prove silu
else
  expect prove_cold 0 '^([0-9]+) proved \(0 from the cache\), 0 not proved' -- "${pc[@]}" "$ingot" prove silu --dtype f32
  "${pc[@]}" "$ingot" prove silu --dtype f32 --no-cache > prove_fresh.txt 2>&1
  "${pc[@]}" "$ingot" prove silu --dtype f32 > prove_cached.txt 2>&1
  # Same cases, same outcome and counts; only the timing part differs.
  if grep -Eq '^([0-9]+) proved \(\1 from the cache\), 0 not proved' prove_cached.txt &&
     grep -q '; cached, proved in' prove_cached.txt &&
     diff <(grep '^proved' prove_fresh.txt | sed 's/;.*//') <(grep '^proved' prove_cached.txt | sed 's/;.*//') > /dev/null; then
    pass=$((pass+1)); echo "PASS prove_cached_same_outcome"
  else
    fail=$((fail+1)); echo "FAIL prove_cached_same_outcome"; sed 's/^/    /' prove_cached.txt | tail -15
  fi
  expect prove_no_cache 0 '^([0-9]+) proved \(0 from the cache\)' -- "${pc[@]}" "$ingot" prove silu --dtype f32 --no-cache
  entries=("$work"/pcache/prove/*.bin)
  # silu f32 has three cases: one entry corrupt (a byte of its payload changed), one truncated, and another key's
  # (valid) entry under the third's name.
  cp "${entries[1]}" "${entries[2]}"
  printf 'X' | dd of="${entries[0]}" bs=1 seek=$(( $(stat -c %s "${entries[0]}") - 3 )) conv=notrunc 2> /dev/null
  truncate -s 40 "${entries[1]}"
  expect prove_corrupt_ignored 0 '^3 proved \(0 from the cache\), 0 not proved' -- "${pc[@]}" "$ingot" prove silu --dtype f32
  expect prove_corrupt_rewritten 0 '^3 proved \(3 from the cache\), 0 not proved' -- "${pc[@]}" "$ingot" prove silu --dtype f32
  # The key is what the proof depends on, not the case's name: with --set n=1000 the three cases are one launch, so
  # the first is proved (a new key: another scalar and grid) and the other two find its entry (one proof at a time:
  # proofs run at once would all miss it).
  expect prove_key_by_content 0 '^3 proved \(2 from the cache\), 0 not proved' -- "${pc[@]}" "$ingot" prove silu --dtype f32 --set n=1000 -j 1
  # A cache folder that cannot be written costs time, not the proof.
  expect prove_cache_unwritable 0 '^3 proved \(0 from the cache\), 0 not proved' -- env INGOT_CACHE_DIR=/proc/no-such-cache "$ingot" prove silu --dtype f32
  # --json: every case with its counts; a case that cannot be built is an error row; an unwritable path is refused
  # before anything is proved.
  expect prove_json 0 '^3 proved' -- "${pc[@]}" "$ingot" prove silu --dtype f32 --json "$work/prove.json"
  expect prove_json_parses 0 '^3 cases: silu f32 n1 proved cached' -- perl -MJSON::PP -e '
    local $/; open(my $f, "<", $ARGV[0]) or die; my $j = decode_json(<$f>); my @r = @{$j->{results}};
    for my $x (@r) { for my $k (qw(kernel dtype case status obligations by_intervals smt_queries seconds cached issues)) {
      die "missing $k" unless exists $x->{$k}; } }
    die "counts" unless $j->{proved} == 3 && $j->{not_proved} == 0 && $j->{from_cache} == 3;
    printf "%d cases: %s %s %s %s %s\n", scalar(@r), $r[0]{kernel}, $r[0]{dtype}, $r[0]{case}, $r[0]{status},
      $r[0]{cached} ? "cached" : "fresh";' "$work/prove.json"
  expect prove_json_error_row 1 'NOT PROVED  gemm f32' -- "${pc[@]}" "$ingot" prove gemm --dtype f32 --set batch=0 --json "$work/prove_err.json"
  expect prove_json_error_status 0 '"status" : "error"' -- perl -MJSON::PP -e '
    local $/; open(my $f, "<", $ARGV[0]) or die; my $j = decode_json(<$f>);
    print JSON::PP->new->pretty->encode($j->{results}[0]);' "$work/prove_err.json"
  out=$("${pc[@]}" "$ingot" prove silu --dtype f32 --json /nonexistent-dir/x.json 2>&1); rc=$?
  if [[ $rc -eq 2 && $out == *"the folder '/nonexistent-dir' does not exist"* && $out != *proved* ]]; then
    pass=$((pass+1)); echo "PASS prove_json_refused_before_proving"
  else
    fail=$((fail+1)); echo "FAIL prove_json_refused_before_proving (rc=$rc)"; sed 's/^/    /' <<<"$out" | tail -15
  fi
fi

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]

