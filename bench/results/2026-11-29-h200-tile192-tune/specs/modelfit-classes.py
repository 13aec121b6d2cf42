import json,re,math,collections,statistics as st
D=[o for o in json.load(open('/tmp/mf.json')) if o['same']]
def feat(o):
    k=o['kern'].split('sm90a_')[1]
    m=re.match(r'(\d+)x(\d+)x(\d+)_s(\d+)_w(\d)_c([0-9x]+)(.*)',k)
    bm,bn,bk,s,w,c,rest=m.groups()
    f={'bm':int(bm),'bn':int(bn),'w':int(w),'swap':'_ab' in rest,'pp':'_pp' in rest,
       'split':bool(re.search(r'_k\d',rest)),'ws':'_ws' in rest,'sk':'_sk' in rest,'clu':c!='1','pair':'x' in c,
       'fp8':'e4m3' in o['kern'],'mem':'memory-bound' in o['plan']}
    return f
for o in D: o['f']=feat(o); o['lr']=math.log(o['us']/o['est'])
print('n',len(D),'log sd',round(st.pstdev([o['lr'] for o in D]),3),'mean',round(st.mean([o['lr'] for o in D]),3))
def group(keyf,name):
    g=collections.defaultdict(list)
    for o in D: g[keyf(o)].append(o['lr'])
    print(name, {k:(len(v),round(math.exp(st.mean(v)),2)) for k,v in sorted(g.items(),key=lambda x:str(x[0]))})
group(lambda o:o['f']['bm'],'block_m')
group(lambda o:o['f']['swap'],'swap')
group(lambda o:o['f']['pp'],'pingpong')
group(lambda o:(o['f']['split'],o['f']['ws'],o['f']['sk']),'split/ws/sk')
group(lambda o:o['f']['clu'],'cluster')
group(lambda o:o['f']['pair'],'pair')
group(lambda o:o['f']['fp8'],'fp8')
group(lambda o:o['f']['mem'],'memory-bound')
group(lambda o:min(o['f']['bn']//48,4),'bn/48')
group(lambda o:('M<=64' if o['m']<=64 else 'M<=256' if o['m']<=256 else 'M<=1024' if o['m']<=1024 else 'big'),'M')

def cls(o):
    f=o['f']
    return {'b192':f['bm']==192,'ksplit':f['split'],'sk':f['sk'],'clu':f['clu'] and not f['split']}
def fit(train):
    fac={}
    base=[o['lr'] for o in train if not any(cls(o).values())]
    b0=st.mean(base)
    for c in ['b192','ksplit','sk','clu']:
        v=[o['lr'] for o in train if cls(o)[c]]
        fac[c]=st.mean(v)-b0 if len(v)>=5 else 0.0
    return fac
def corr(o,fac):
    return o['est']*math.exp(sum(fac[c] for c,on in cls(o).items() if on))
rows=collections.defaultdict(list)
for o in D: rows[(o['tag'],o['row'])].append(o)
rows={k:v for k,v in rows.items() if len(v)>=2}
keys=sorted(rows)
import random
random.seed(1)
tot_raw=[];tot_cor=[];tot_best=[]
folds=5
random.shuffle(keys)
for i in range(folds):
    test=keys[i::folds]
    train=[o for k in keys if k not in test for o in rows[k]]
    fac=fit(train)
    for k in test:
        v=rows[k]
        best=min(o['us'] for o in v)
        raw=min(v,key=lambda o:o['est'])['us']
        cor=min(v,key=lambda o:corr(o,fac))['us']
        tot_raw.append(math.log(best/raw)); tot_cor.append(math.log(best/cor))
print('rows',len(keys),'pick by raw est: %.3f of best; corrected: %.3f'%(math.exp(st.mean(tot_raw)),math.exp(st.mean(tot_cor))))
print('factors on all:',{k:round(math.exp(v),3) for k,v in fit(D).items()})

def fit_fe(train_rows):
    res=collections.defaultdict(list)
    for v in train_rows:
        mu=st.mean(o['lr'] for o in v)
        for o in v:
            c=cls(o); key=tuple(sorted(k for k,on in c.items() if on))
            for kk,on in c.items():
                if on: res[kk].append(o['lr']-mu)
            if not any(c.values()): res['none'].append(o['lr']-mu)
    b0=st.mean(res['none']) if res['none'] else 0
    return {c:(st.mean(res[c])-b0 if len(res[c])>=5 else 0.0) for c in ['b192','ksplit','sk','clu']}
tot_raw=[];tot_cor=[]
for i in range(folds):
    test=keys[i::folds]
    fac=fit_fe([rows[k] for k in keys if k not in test])
    for k in test:
        v=rows[k]; best=min(o['us'] for o in v)
        tot_raw.append(math.log(best/min(v,key=lambda o:o['est'])['us']))
        tot_cor.append(math.log(best/min(v,key=lambda o:corr(o,fac))['us']))
print('fixed effects: raw %.3f corrected %.3f'%(math.exp(st.mean(tot_raw)),math.exp(st.mean(tot_cor))))
print('fe factors on all:',{k:round(math.exp(v),3) for k,v in fit_fe(list(rows.values())).items()})
