#!/usr/bin/env python3
"""The layering rules of src/ and include/, checked on the build's objects and on the sources.

1. Ranks: tests/tools/layers.txt gives every object of the libraries a rank (the module order
   of docs/architecture.md). A call from one object to another (the names it uses that the
   other defines, read with nm) must not go to a higher rank. An object with no rank, and a
   rank for an object that does not exist, are errors too.
2. No circle between files: the arrows are the calls between objects, the #include lines of
   every source and header, and the names a header's inline functions use that an object
   defines (a header whose inline code calls into the file that includes it is a circle).
3. No shared names: a static function defined in a header is compiled into every file that
   includes it, so its name must not be defined by any other file of src/.
4. No public header (include/*.h) exposes a third-party type: none includes, directly or
   through another header of include/, a header outside the C library, POSIX and include/,
   but for the one header whose contract is that library's type (ns_json_tree.h: cJSON trees),
   which no other public header may include.

Usage: check_layers.py <source root> <layers.txt> <lib.a>...   Exit status 0 when all hold.
"""
import os
import re
import subprocess
import sys

ALLOWED_SYSTEM = re.compile(
    r'^(assert|ctype|errno|fcntl|inttypes|limits|pthread|signal|stdarg|stdatomic|stdbool|stddef|'
    r'stdint|stdio|stdlib|string|strings|time|unistd|netinet/in|arpa/inet|sys/[a-z_]+)\.h$')
# header: the third-party header it exists to show
OWN_THIRD_PARTY = {'ns_json_tree.h': 'cjson/cJSON.h'}
GLOBAL_KINDS = set('TDBRCVWG')


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def nm_symbols(libs):
    """(definitions: name -> set of objects, uses: list of (object, name))"""
    defs, uses = {}, []
    for lib in libs:
        out = subprocess.run(['nm', '-A', lib], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 3 and not (len(parts) == 2 and ':' in parts[0]):
                continue
            where = parts[0].split(':')
            if len(where) < 2:
                continue
            obj = where[1][:-2] if where[1].endswith('.o') else where[1]
            kind, name = parts[-2], parts[-1]
            if kind in GLOBAL_KINDS:
                defs.setdefault(name, set()).add(obj)
            elif kind == 'U':
                uses.append((obj, name))
    return defs, uses


def inline_bodies(text):
    """Yields (function name, body text) for every static inline function of a header."""
    for m in re.finditer(r'static\s+inline\b[^;{}]*?\b(\w+)\s*\([^;{}]*\)\s*\{', text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {'{': 1, '}': -1}.get(text[i], 0)
            i += 1
        yield m.group(1), text[m.end():i - 1]


def resolve_include(name, including, root):
    for base in (os.path.dirname(including), os.path.join(root, 'src'),
                 os.path.join(root, 'include')):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return path
    return None


def find_cycles(arrows):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    nodes = set(arrows) | {b for bs in arrows.values() for b in bs}
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(arrows.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(arrows.get(w, ())))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root, layers_path, libs = os.path.abspath(argv[1]), argv[2], argv[3:]
    src = os.path.join(root, 'src')
    inc = os.path.join(root, 'include')
    errors = []

    # Every source and header of src/ and include/, by path; objects by their file name.
    files = []
    for d, _, names in os.walk(src):
        files += [os.path.join(d, n) for n in names if n.endswith(('.c', '.h'))]
    files += [os.path.join(inc, n) for n in os.listdir(inc) if n.endswith('.h')]
    by_base = {}
    for f in files:
        if f.endswith('.c'):
            by_base.setdefault(os.path.basename(f), []).append(f)
    for base, paths in by_base.items():
        if len(paths) > 1:
            errors.append('two sources named %s: %s' % (base, ', '.join(paths)))

    def rel(path):
        return os.path.relpath(path, root)

    def module_object(path):  # src/base/hmap.c -> base/hmap
        return os.path.relpath(path, src)[:-2]

    defs, uses = nm_symbols(libs)
    objects = {o for objs in defs.values() for o in objs} | {o for o, _ in uses}
    obj_path = {}
    for o in objects:
        paths = by_base.get(o)
        if not paths:
            errors.append('object %s has no source under src/' % o)
        else:
            obj_path[o] = paths[0]

    # ---- 1: ranks ------------------------------------------------------------------------
    rank = {}
    for n, line in enumerate(read(layers_path).splitlines(), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].isdigit():
            errors.append('%s:%d: expected "<rank> <module>/<file>"' % (layers_path, n))
            continue
        if parts[1] in rank:
            errors.append('%s:%d: %s ranked twice' % (layers_path, n, parts[1]))
        rank[parts[1]] = int(parts[0])
    known = {module_object(p) for p in obj_path.values()}
    for o in sorted(known - set(rank)):
        errors.append('object %s has no rank in %s' % (o, layers_path))
    for o in sorted(set(rank) - known):
        errors.append('%s ranks %s, which is no object of the libraries' % (layers_path, o))

    call_arrows = {}
    for obj, name in uses:
        owners = defs.get(name, set())
        if len(owners) != 1:
            continue  # external, or ambiguous
        to = next(iter(owners))
        if to == obj or obj not in obj_path or to not in obj_path:
            continue
        call_arrows.setdefault((obj_path[obj], obj_path[to]), set()).add(name)
    for (a, b), names in sorted(call_arrows.items()):
        ra, rb = rank.get(module_object(a)), rank.get(module_object(b))
        if ra is not None and rb is not None and rb > ra:
            errors.append('%s (rank %d) calls up into %s (rank %d): %s' %
                          (rel(a), ra, rel(b), rb, ', '.join(sorted(names)[:6])))

    # ---- 2: no circle between files ------------------------------------------------------
    arrows = {}
    why = {}

    def arrow(a, b, reason):
        arrows.setdefault(a, set()).add(b)
        why.setdefault((a, b), set()).add(reason)

    for (a, b), names in call_arrows.items():
        for n in names:
            arrow(a, b, n)
    texts = {f: strip_comments(read(f)) for f in files}
    for f, text in texts.items():
        for m in re.finditer(r'^\s*#\s*include\s*"([^"]+)"', text, flags=re.M):
            target = resolve_include(m.group(1), f, root)
            if target is not None and target != f:
                arrow(f, target, '#include')
        if f.endswith('.h'):
            for fn, body in inline_bodies(text):
                for ident in set(re.findall(r'\b[A-Za-z_]\w*\b', body)):
                    for o in defs.get(ident, ()):
                        if o in obj_path:
                            arrow(f, obj_path[o], '%s() uses %s' % (fn, ident))
    for comp in find_cycles(arrows):
        members = set(comp)
        lines = ['circle: ' + ' <-> '.join(rel(c) for c in comp)]
        for a in comp:
            for b in sorted(arrows.get(a, ()) & members):
                lines.append('    %s -> %s: %s' % (rel(a), rel(b),
                                                    ', '.join(sorted(why[(a, b)])[:4])))
        errors.append('\n'.join(lines))

    # ---- 3: names a header's static functions share with other files ---------------------
    defined_in = {}
    for f, text in texts.items():
        for m in re.finditer(r'^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;{}]*\)\s*\n\{', text, re.M):
            defined_in.setdefault(m.group(1), set()).add(f)
        if f.endswith('.h'):
            for fn, _ in inline_bodies(text):
                defined_in.setdefault(fn, set()).add(f)
    for f, text in texts.items():
        if not f.endswith('.h'):
            continue
        for fn, _ in inline_bodies(text):
            others = defined_in.get(fn, set()) - {f}
            if others:
                errors.append('%s defines static %s(), also defined in %s' %
                              (rel(f), fn, ', '.join(sorted(rel(o) for o in others))))

    # ---- 4: third-party headers reached from include/ ------------------------------------
    for h in sorted(os.listdir(inc)):
        if not h.endswith('.h'):
            continue
        seen, todo = {h}, [h]
        while todo:
            cur = todo.pop()
            text = texts[os.path.join(inc, cur)]
            for sysh in re.findall(r'^\s*#\s*include\s*<([^>]+)>', text, flags=re.M):
                if cur == h and OWN_THIRD_PARTY.get(h) == sysh:
                    continue
                if not ALLOWED_SYSTEM.match(sysh):
                    errors.append('public header %s exposes <%s> (through %s)' % (h, sysh, cur))
            for loc in re.findall(r'^\s*#\s*include\s*"([^"]+)"', text, flags=re.M):
                if loc not in seen and os.path.isfile(os.path.join(inc, loc)):
                    seen.add(loc)
                    todo.append(loc)

    if errors:
        print('\n'.join(errors))
        return 1
    print('check_layers: %d objects ranked, %d calls between objects, none upwards; no circle '
          'among %d files; no shared header name; no public header exposes a third-party '
          'header' % (len(known), len(call_arrows), len(files)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
