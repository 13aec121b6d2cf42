M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,smsp__inst_executed.sum,sm__cycles_active.avg,lts__t_sectors_op_write.sum,sm__warps_active.avg.per_cycle_active,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__block_size,sm__inst_executed_pipe_tensor_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__cycles_active.avg
for r in "s1 152 12288 13824" "w1 1159 1024 7168" "s12 143 4096 21984" "s21 857 1024 8192" "w2 170 2112 18432"; do
  set -- $r
  timeout 60 ncu --metrics $M --kernel-name regex:'^jg_gemm' --launch-skip 3 --launch-count 1 --csv build/tools/jitgemm-bench --spec $PWD/bench/tmp/small-out.jsonl --only $1 --reps 50 --no-check --no-peer > $OUT/ncu-$1-ours.csv 2> $OUT/ncu-$1-ours.err
  timeout 60 ncu --metrics $M --launch-skip 6 --launch-count 4 --csv python3 bench/tmp/mm.py $2 $3 $4 > $OUT/ncu-$1-torch.csv 2> $OUT/ncu-$1-torch.err
done
