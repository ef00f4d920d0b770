import re,sys
lines=sys.stdin.read().splitlines()
title=lines[0].split()[0] if lines else ''
body=lines[1:-1]
out=[]; para=[]
def flush():
    if para:
        t=' '.join(para); t=re.sub(r'\s+',' ',t).strip()
        if t: out.append(t)
        para.clear()
for l in body:
    if not l.strip(): flush(); continue
    if not l.startswith(' '):
        flush(); out.append('## '+l.strip()); continue
    if re.match(r'^ {3}\S', l):  # subsection
        flush(); out.append('### '+l.strip()); continue
    ind=len(l)-len(l.lstrip())
    if ind==7 and para and re.match(r'^ {7}-',l): flush()
    para.append(l.strip())
flush()
print('# '+sys.argv[1]+'\n\n'+'\n\n'.join(out))
