set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/gpu-tests
( export JITGEMM_CACHE=off
run() { n=$1; shift; t0=$(date +%s); timeout $((400-$(el))) "$@" > $OUT/gpu-tests/test-$n.log 2>&1; echo "$n rc=$? $(( $(date +%s)-t0 ))s"; }
( run fp8 build/tests/test_fp8 ) > $OUT/a.txt &
( run nvfp4 build/tests/test_nvfp4; run grouped_nvfp4 build/tests/test_grouped_nvfp4 ) > $OUT/b.txt &
( run any_fuzz build/tests/test_any_fuzz ) > $OUT/c.txt &
( run gemm_basic build/tests/test_gemm_basic; run grouped build/tests/test_grouped; run pdl build/tests/test_pdl; run run_in_context build/tests/test_run_in_context; run many_kernels build/tests/test_many_kernels; run offline_plans build/tests/test_offline_plans --dims bench/model-dims.json; run gemm_fuzz build/tests/test_gemm_fuzz ) > $OUT/d.txt &
wait
cat $OUT/a.txt $OUT/b.txt $OUT/c.txt $OUT/d.txt > $OUT/gpu-tests/summary.txt; rm $OUT/?.txt )
cat $OUT/gpu-tests/summary.txt
for f in $OUT/gpu-tests/test-*.log; do echo "== $f"; tail -2 $f; done
echo "suite done at $(el)s"
export JITGEMM_COMMIT=$(cat bench/tmp/commit)+rules JITGEMM_CACHE_DIR=/tmp/c-draw
mkdir -p $OUT/draw
timeout $((490-$(el))) python3 bench/peer_torch.py --random 200 --dtype bf16 --json $OUT/draw/torch-bf16.json > $OUT/draw/torch-bf16.log 2>&1; echo "bf16 rc=$? at $(el)s"; grep -A3 "random summary" $OUT/draw/torch-bf16.log | head -4
timeout $((560-$(el))) python3 bench/peer_torch.py --random 200 --dtype fp8 --scale tensor --json $OUT/draw/torch-fp8-tensor.json > $OUT/draw/torch-fp8-tensor.log 2>&1; echo "fp8 rc=$? at $(el)s"; grep -A3 "random summary" $OUT/draw/torch-fp8-tensor.log | head -4
sh bench/pack-out.sh $OUT
