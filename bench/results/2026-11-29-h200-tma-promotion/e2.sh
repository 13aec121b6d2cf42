set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
patch -p1 < bench/tmp/promo.diff > /dev/null || exit 1
(meson setup build -Dbuildtype=release > /dev/null && ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "build at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
# TMA L2 promotion of the operands' tensor maps (256 B in the library before) on rows off 32-byte sectors
for d in fp8 bf16; do t0=$(date +%s)
timeout 250 python3 bench/env_sweep.py --spec $PWD/bench/tmp/promo-$d.jsonl --rounds 2 --out $OUT/promo-$d --variant base= --variant p0=JITGEMM_TMA_PROMO=0 --variant p64=JITGEMM_TMA_PROMO=64 --variant p128=JITGEMM_TMA_PROMO=128 -- --reps 50 > $OUT/promo-$d.log 2>&1; echo "promo $d rc=$? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/promo-$d.log
done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
