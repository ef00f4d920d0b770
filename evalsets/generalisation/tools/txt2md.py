import re,sys
lines=sys.stdin.read().splitlines()
out=[];para=[]
def flush():
    if para:
        out.append(re.sub(r'\s+',' ',' '.join(para)).strip()); para.clear()
for l in lines:
    if not l.strip() or set(l.strip())<={'_'}: flush(); continue
    m=re.match(r'^(\d+)\. (\S.*)$',l)
    m2=re.match(r'^  (\d+\.\d+)\. (\S.*)$',l)
    m3=re.match(r'^    (\d+\.\d+\.\d+)\. (\S.*)$',l)
    if m: flush(); out.append(f'## {m.group(1)}. {m.group(2)}'); continue
    if m2: flush(); out.append(f'### {m2.group(1)}. {m2.group(2)}'); continue
    if m3: flush(); out.append(f'#### {m3.group(1)}. {m3.group(2)}'); continue
    if re.match(r'^ {3,8}(\d+|[a-z])\. ',l): flush()
    para.append(l.strip())
flush()
print(f'# {sys.argv[1]}\n\n'+'\n\n'.join(out))
