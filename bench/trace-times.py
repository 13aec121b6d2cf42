#!/usr/bin/env python3
"""Reads the "JGT pdl block smid t0 t1 t2 t3 t4" lines that
bench/patches/trace-times.patch makes each CTA print (globaltimer, ns: kernel
entry, after the PDL wait, first stage landed, last stage landed, CTA done)
and prints, per launch kind (PDL or plain), the medians over launches of
where a kernel's time goes:

  first   past the wait -> first stage landed (median CTA, slowest CTA)
  stream  first stage -> last stage landed (median CTA, slowest CTA)
  tail    last stage -> CTA done (median)
  span    first CTA past its wait -> last CTA done
  skew    last CTA done - median CTA done

printf slows each launch about tenfold, so the gaps between launches are not
measured; the phases inside one are.

Usage: python3 bench/trace-times.py LOG [LOG...]"""
import statistics as st
import sys


def launches(rows):
    """Groups CTAs into launches: sorted by t1, a new launch where t1 jumps by
    more than 2 us (kernels run longer than that)."""
    rows.sort(key=lambda r: r[4])
    out, cur = [], []
    for r in rows:
        if cur and r[4] - cur[-1][4] > 2000:
            out.append(cur)
            cur = []
        cur.append(r)
    if cur:
        out.append(cur)
    return out


def main():
    rows = {0: [], 1: []}
    for path in sys.argv[1:]:
        for line in open(path, errors="replace"):
            f = line.split()
            if len(f) == 9 and f[0] == "JGT":
                v = [int(x) for x in f[1:]]
                rows[v[0]].append(v)
    for pdl, rs in rows.items():
        if not rs:
            continue
        ls = launches(rs)
        ctas = st.median(len(l) for l in ls)
        stats = {k: [] for k in ("first", "first_max", "stream", "stream_max", "tail", "span",
                                 "skew")}
        for l in ls:
            t1 = min(r[4] for r in l)
            end = max(r[7] for r in l)
            if len(l) != ctas:
                continue
            first = [r[5] - r[4] for r in l]
            stream = [r[6] - r[5] for r in l]
            stats["first"].append(st.median(first))
            stats["first_max"].append(max(first))
            stats["stream"].append(st.median(stream))
            stats["stream_max"].append(max(stream))
            stats["tail"].append(st.median(r[7] - r[6] for r in l))
            stats["span"].append(end - t1)
            stats["skew"].append(end - st.median(r[7] for r in l))
        print(f"{'PDL' if pdl else 'plain'}: {len(ls)} launches of {ctas:.0f} CTAs; medians over "
              "launches, us:")
        for k, v in stats.items():
            if v:
                print(f"  {k:11s} {st.median(v) / 1000:7.2f}   (p10 {sorted(v)[len(v) // 10] / 1000:.2f},"
                      f" p90 {sorted(v)[len(v) * 9 // 10] / 1000:.2f})")


if __name__ == "__main__":
    main()
