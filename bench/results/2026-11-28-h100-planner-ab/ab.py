import json,math,re,sys
def gm(v): return math.exp(sum(map(math.log,v))/len(v)) if v else float('nan')
def load(f): return {r['name']:r for r in json.load(open(f))['rows']}
for d in ['bf16','fp8']:
    A=load(f'{d}-a.json'); B=load(f'{d}-b.json'); Z=load(f'{d}-base.json')
    names=[n for n in A if A[n].get('ours_us') and B.get(n,{}).get('ours_us') and Z.get(n,{}).get('ours_us') and A[n].get('cublas_us')]
    def kn(r): return r['kernel'].split('sm90a_')[1].split('_m')[0]
    print(f'== {d}: {len(names)} rows')
    for t,T in [('base',Z),('a',A),('b',B)]:
        v=[A[n]['cublas_us']/T[n]['ours_us'] for n in names]; v.sort()
        print(f"  {t:5s} vs cuBLAS geomean {gm(v):.3f} p10 {v[len(v)//10]:.3f} min {v[0]:.3f}")
    for lab,X,Y in [('a/base',A,Z),('b/base',B,Z),('b/a',B,A)]:
        ch=[n for n in names if kn(X[n])!=kn(Y[n])]; un=[n for n in names if kn(X[n])==kn(Y[n])]
        print(f"  {lab}: changed {len(ch)} rows: {gm([Y[n]['ours_us']/X[n]['ours_us'] for n in ch]):.3f} (>1 = first faster); unchanged {len(un)}: {gm([Y[n]['ours_us']/X[n]['ours_us'] for n in un]):.3f}")
    # bands
    for lo,hi in [(1,128),(129,2048),(2049,16384)]:
        s=[n for n in names if lo<=A[n]['m']<=hi]
        print(f"  M {lo}-{hi} ({len(s)}): base {gm([A[n]['cublas_us']/Z[n]['ours_us'] for n in s]):.3f} a {gm([A[n]['cublas_us']/A[n]['ours_us'] for n in s]):.3f} b {gm([A[n]['cublas_us']/B[n]['ours_us'] for n in s]):.3f}")
