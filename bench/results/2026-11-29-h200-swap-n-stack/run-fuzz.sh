set -u
S=/tmp/b-sns/build/tests
t0=$(date +%s)
(cd /tmp/b-sns && JITGEMM_SWAP=1 JITGEMM_SPLIT=1 JITGEMM_N_STACK=2 timeout 150 build/tests/test_gemm_fuzz --count 300) > $OUT/sns-gemm-fuzz.log 2>&1; echo "gemm_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/sns-gemm-fuzz.log
t0=$(date +%s)
(cd /tmp/b-sns && JITGEMM_SWAP=1 JITGEMM_SPLIT=1 JITGEMM_N_STACK=2 timeout 100 build/tests/test_any_fuzz --count 200) > $OUT/sns-any-fuzz.log 2>&1; echo "any_fuzz rc=$? $(( $(date +%s)-t0 ))s"; tail -3 $OUT/sns-any-fuzz.log
sh bench/pack-out.sh $OUT
