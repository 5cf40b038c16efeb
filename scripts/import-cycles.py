#!/usr/bin/env python3
"""Reports circles in each crate's module import graph (exit 1 if any).

A node is a top-level module of a crate (`crate::a2s`, `crate::client`, ...); an edge
A -> B means a file of A names `crate::B` (in a `use` or a path). Child modules count as
their top-level module, so `a2s::client` using `crate::client_core` is an edge
a2s -> client_core. Test modules (`#[cfg(test)]` to the end of a file) are left out:
they may use anything.
"""
import os, re, sys

def modules(src):
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith('.rs'):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            top = rel.split(os.sep)[0]
            top = top[:-3] if top.endswith('.rs') else top
            if top in ('lib', 'main'):
                continue
            text = open(path, encoding='utf-8').read()
            cut = text.find('#[cfg(test)]')
            if cut >= 0:
                text = text[:cut]
            # drop comments
            text = re.sub(r'//[^\n]*', '', text)
            deps = set(re.findall(r'\bcrate::([a-z_][a-z0-9_]*)', text))
            # `use crate::{a, b::C}` names a and b too (nested braces are flattened).
            for group in re.findall(r'\bcrate::\{([^;]*)\}', text):
                deps.update(re.findall(r'(?:^|[{,])\s*([a-z_][a-z0-9_]*)', group))
            # `use super::x` from a file in a folder reaches a sibling inside the same
            # top-level module; from a top-level file it would reach the crate root.
            out.setdefault(top, set()).update(d for d in deps if d != top)
    return out

def cycles(graph):
    found, state, stack = [], {}, []
    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if m not in graph:
                continue
            if state.get(m) == 1:
                found.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2
    for n in sorted(graph):
        if n not in state:
            visit(n)
    return found

bad = 0
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'crates')
for crate in sorted(os.listdir(root)):
    src = os.path.join(root, crate, 'src')
    if not os.path.isdir(src):
        continue
    for c in cycles(modules(src)):
        bad += 1
        print(f'{crate}: ' + ' -> '.join(c))
if bad:
    sys.exit(1)
print('no import circles')
