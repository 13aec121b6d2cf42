set -u
T0=$(date +%s)
el() { echo $(( $(date +%s)-T0 )); }
for f in .devdeps/*.deb; do dpkg -x $f /; done
(meson setup build -Dbuildtype=release > /dev/null 2>&1; ninja -C build) > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
rm -rf /tmp/b-base; mkdir -p /tmp/b-base && tar cf - --exclude=./build --exclude=./.git . | tar xf - -C /tmp/b-base
(cd /tmp/b-base && patch -R -p1 < bench/tmp/band.diff > /dev/null && meson setup build -Dbuildtype=release > /dev/null && ninja -C build tools/jitgemm-bench) > $OUT/build-base.log 2>&1 || { tail -30 $OUT/build-base.log; exit 1; }
echo "builds at $(el)s"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
BASE=BENCH=/tmp/b-base/build/tools/jitgemm-bench
for d in bf16 fp8; do t0=$(date +%s)
timeout 200 python3 bench/env_sweep.py --spec $PWD/bench/tmp/band-$d.jsonl --rounds 2 --peer --out $OUT/band-$d --variant base=$BASE --variant band= -- --reps 50 --energy > $OUT/band-$d.log 2>&1; echo "band $d rc=$? $(( $(date +%s)-t0 ))s"; tail -8 $OUT/band-$d.log
done
echo "at $(el)s"
m=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
for r in s1 s10 s12; do
timeout 40 ncu --metrics $m --kernel-name regex:'^jg_gemm' --launch-skip 3 --launch-count 1 --csv build/tools/jitgemm-bench --spec $PWD/bench/tmp/ncu-bf16.jsonl --only $r --reps 50 --no-check --no-peer > $OUT/ncu-band-$r.csv 2>&1; grep -E "dram__bytes|gpu__time|lts__t" $OUT/ncu-band-$r.csv | awk -F'","' '{print "'$r'", $(NF-2), $NF}'
done
echo "at $(el)s"
sh bench/pack-out.sh $OUT
