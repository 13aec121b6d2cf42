import json,glob,os,re,subprocess,math,collections,sys
R='bench/results'
ENV={'base':{}, 'c2':{'JITGEMM_CLUSTER':'2'}, 'ns2':{'JITGEMM_N_STACK':'2'}, 's2':{'JITGEMM_SPLIT':'2'},
 'sw':{'JITGEMM_SWAP':'1'}, 'sws':{'JITGEMM_SWAP':'1','JITGEMM_SPLIT':'any'}, 't128w2':{'JITGEMM_TILE':'128x128','JITGEMM_SPLIT_WS':'2'},
 't64':{'JITGEMM_TILE':'64x0x0'}, 't64c2':{'JITGEMM_TILE':'64x0x0','JITGEMM_CLUSTER':'2'}, 's8':{'JITGEMM_SPLIT':'8'},
 'ws4':{'JITGEMM_SPLIT_WS':'4'}, 't192':{'JITGEMM_TILE':'192'}, 't192c2':{'JITGEMM_TILE':'192','JITGEMM_CLUSTER':'2'}, 'm192':{}}
sets=[(R+'/2026-11-29-h200-planner-rules/sweep/sw-bf16','a'),(R+'/2026-11-29-h200-planner-rules/sweep/sw-fp8','a'),
      (R+'/2026-11-29-h200-tile192-tune/sweep-worst/sw-bf16','b'),(R+'/2026-11-29-h200-tile192-tune/sweep-worst/sw-fp8','b'),
      (R+'/2026-11-29-h200-tile192-tune/t192','c'),(R+'/2026-11-29-h200-tile192-tune/m192','d'),(R+'/2026-11-29-h200-tile192-tune/m192b','e')]
meas=collections.defaultdict(list)  # (set,row) -> list of (variant, kernel, us, m,n,k,dtype,scale)
for d,tag in sets:
    for f in glob.glob(d+'/*.json'):
        v=os.path.basename(f).rsplit('-',1)[0]
        if v=='summary': continue
        for r in json.load(open(f))['rows']:
            if not r.get('ours_us') or not r.get('kernel'): continue
            meas[(tag,r['name'],v)].append((r['kernel'],r['ours_us'],r['m'],r['n'],r['k'],r.get('dtype'),r.get('scale')))
# group by variant env: estimate offline with the head build
jobs=collections.defaultdict(list)
for (tag,name,v),l in meas.items():
    kern=l[0][0]; us=sum(x[1] for x in l)/len(l); m,n,k,dt,sc=l[0][2:]
    jobs[v].append((tag,name,kern,us,m,n,k,dt,sc))
out=[]
for v,l in jobs.items():
    spec='/tmp/mf-%s.jsonl'%v
    with open(spec,'w') as f:
        for (tag,name,kern,us,m,n,k,dt,sc) in l:
            line={"name":name,"kind":"dense","m":m,"n":n,"k":k}
            if 'e4m3' in kern: line.update(dtype='fp8',scale='tensor')
            elif 'fp16' in kern.split('_')[2]: line['dtype']='fp16'
            else: line['dtype']='bf16'
            f.write(json.dumps(line)+'\n')
    env=dict(os.environ,JITGEMM_LOG='plan',**ENV.get(v,{}))
    r=subprocess.run(['build/tools/jitgemm-warm','--arch','sm_90a','--sm-count','132','-n','--cache-dir','/tmp/mfc',spec],env=env,capture_output=True,text=True)
    txt=r.stdout+r.stderr
    plans=[l2.split('[plan]: ',1)[1] for l2 in txt.splitlines() if '[plan]: ' in l2]
    kern_off=[l2.split()[1] for l2 in txt.splitlines() if l2.startswith('missing') or l2.startswith('cached')]
    if len(plans)!=len(l) or len(kern_off)!=len(l):
        print('skip',v,len(plans),len(kern_off),len(l)); continue
    for (tag,name,kern,us,m,n,k,dt,sc),p,ko in zip(l,plans,kern_off):
        est=float(re.search(r'estimated ([\d.]+) us',p).group(1))
        out.append(dict(tag=tag,row=name,v=v,kern=kern,off=ko,us=us,est=est,m=m,n=n,k=k,same=(ko==kern),plan=p))
json.dump(out,open('/tmp/mf.json','w'))
print(len(out),'measured plans;',sum(o['same'] for o in out),'with the same kernel offline')
