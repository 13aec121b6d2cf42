#!/usr/bin/env python3
"""The committed templates/sm90_wgmma_n.cuh must equal its generator's output."""
import subprocess
import sys

tdir = sys.argv[1]
want = subprocess.run([sys.executable, tdir + "/gen_wgmma_n.py"], check=True,
                      capture_output=True, text=True).stdout
have = open(tdir + "/sm90_wgmma_n.cuh").read()
if want != have:
    print("templates/sm90_wgmma_n.cuh differs from gen_wgmma_n.py's output: regenerate it")
    sys.exit(1)
print("wgmma header: matches its generator")
