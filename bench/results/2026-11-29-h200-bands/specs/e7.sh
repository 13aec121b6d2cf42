set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s; $(git log --oneline -1 2>/dev/null || echo no-git)"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
export JITGEMM_CACHE=off
run() { n=$1; shift; t0=$(date +%s); timeout $((470-$(el))) "$@" > $OUT/test-$n.log 2>&1; echo "$n rc=$? $(( $(date +%s)-t0 ))s"; }
( run fp8 build/tests/test_fp8 ) > $OUT/a.txt &
( run nvfp4 build/tests/test_nvfp4; run grouped_nvfp4 build/tests/test_grouped_nvfp4 ) > $OUT/b.txt &
( run any_fuzz build/tests/test_any_fuzz ) > $OUT/c.txt &
( run gemm_basic build/tests/test_gemm_basic; run grouped build/tests/test_grouped; run pdl build/tests/test_pdl; run run_in_context build/tests/test_run_in_context; run many_kernels build/tests/test_many_kernels; run offline_plans build/tests/test_offline_plans --dims bench/model-dims.json; run gemm_fuzz build/tests/test_gemm_fuzz ) > $OUT/d.txt &
wait
cat $OUT/a.txt $OUT/b.txt $OUT/c.txt $OUT/d.txt
for f in $OUT/test-*.log; do echo "== $f"; tail -3 $f; done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
