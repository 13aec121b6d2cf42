#!/bin/sh
# Nsight Compute on ours and on torch's cuBLAS kernel for the same GEMMs, then
# bench/ncu_compare.py's table: instructions, L2 and DRAM traffic, cycles.
# Needs a GPU, ncu, a build (build/tools/jitgemm-bench) and torch.
#
#   sh bench/ncu-pair.sh ROWS.jsonl [OUT]     (OUT default bench/tmp/ncu)
#
# ROWS: jitgemm-bench spec lines, dense, with "name", "m", "n", "k" and
# optionally "dtype" (bf16, fp16, fp8 with tensor scales); give an absolute
# path or one under the tree. ncu locks the clocks at base and flushes caches
# between passes (its defaults): the figures compare work done, not the
# power-capped speed. Per row OUT/ncu-NAME-ours.csv, OUT/ncu-NAME-torch.csv and
# their .err, then OUT/compare.txt and OUT/compare.json over all rows.
set -u
rows=${1:?usage: sh bench/ncu-pair.sh ROWS.jsonl [OUT]}
out=${2:-bench/tmp/ncu}
mkdir -p "$out"
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
metrics=$metrics,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
metrics=$metrics,lts__t_sectors_op_write.sum,smsp__inst_executed.sum,sm__cycles_active.avg
metrics=$metrics,sm__warps_active.avg.per_cycle_active,sm__inst_executed_pipe_tensor_op_gmma.sum
metrics=$metrics,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__cycles_active.avg
metrics=$metrics,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__block_size
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        r = json.loads(line)
        print(r["name"], r["m"], r["n"], r["k"], r.get("dtype", "bf16"))
' "$rows" | while read -r name m n k dtype; do
    case $dtype in
    fp8) scale="--dtype fp8 --scale tensor" ;;
    *) scale="--dtype $dtype" ;;
    esac
    # shellcheck disable=SC2086
    timeout 120 ncu --metrics $metrics --kernel-name regex:'^jg_gemm' --launch-skip 3 \
        --launch-count 1 --csv build/tools/jitgemm-bench --spec "$rows" --only "$name" $scale \
        --reps 50 --no-check --no-peer > "$out/ncu-$name-ours.csv" 2> "$out/ncu-$name-ours.err"
    timeout 120 ncu --metrics $metrics --kernel-name regex:'nvjet|gemm|splitK|cutlass|sm90' \
        --launch-skip 6 --launch-count 4 --csv python3 bench/ncu_peer.py "$m" "$n" "$k" "$dtype" \
        > "$out/ncu-$name-torch.csv" 2> "$out/ncu-$name-torch.err"
    echo "$name: ncu done"
done
python3 bench/ncu_compare.py "$out" --json "$out/compare.json" | tee "$out/compare.txt"
