# This run was ../elect-firstbox/run.sh with these differences:
#   S1=2246004437; S2=3499895292 (no S3: no peer_torch.py run at the end)
#   the patch: bench/results/2026-11-29-h200-elect-producer/elect.patch
#   test_gemm_fuzz --count 250 (timeout 50)
# and its base was b4b7b47 with bench/patches/swap-pairs-fp8.patch applied (merged as bef2f45).
