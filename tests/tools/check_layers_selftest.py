#!/usr/bin/env python3
"""check_layers.py on small planted trees: a clean one passes, and each rule fails on its own
planted breach (an upward call, an object with no rank, a stale rank, a header whose inline
code calls into the file that includes it, a static header function sharing a name, a public
header showing a third-party header). Usage: check_layers_selftest.py <check_layers.py> <cc>"""
import os
import subprocess
import sys
import tempfile

CLEAN = {
    'include/ns_low.h': '#include <stdint.h>\nint ns_low(int x);\n',
    'include/ns_high.h': 'int ns_high(int x);\n',
    'src/base/low.c': '#include "ns_low.h"\nint ns_low(int x)\n{\n    return x + 1;\n}\n',
    'src/proc/high.c': ('#include "ns_high.h"\n#include "ns_low.h"\nint ns_high(int x)\n{\n'
                        '    return ns_low(x) * 2;\n}\n'),
}
LAYERS = '1 base/low\n2 proc/high\n'

BREACHES = [
    ('upward call', {'src/base/low.c': ('#include "ns_low.h"\n#include "ns_high.h"\n'
                                        'int ns_low(int x)\n{\n    return ns_high(x) + 1;\n}\n'),
                     'src/proc/high.c': '#include "ns_high.h"\nint ns_high(int x)\n{\n'
                                        '    return x * 2;\n}\n'},
     None, 'calls up into'),
    ('object with no rank', {}, '1 base/low\n', 'has no rank'),
    ('stale rank', {}, LAYERS + '3 net/gone\n', 'which is no object'),
    ('header inline calls its includer', {
        'include/ns_low.h': ('#include <stdint.h>\nint ns_low(int x);\nint ns_low_slow(int x);\n'
                             'static inline int ns_low_fast(int x)\n{\n'
                             '    return x > 0 ? x : ns_low_slow(x);\n}\n'),
        'src/base/low.c': ('#include "ns_low.h"\nint ns_low(int x)\n{\n    return ns_low_fast(x);\n}\n'
                           'int ns_low_slow(int x)\n{\n    return -x;\n}\n')},
     None, 'circle:'),
    ('shared name', {
        'include/ns_low.h': ('int ns_low(int x);\nstatic inline int is_digit(int c)\n{\n'
                             '    return c >= 48 && c <= 57;\n}\n'),
        # high.c does not include ns_low.h: its own is_digit compiles, and is the namesake
        'src/proc/high.c': ('#include "ns_high.h"\nint ns_low(int x);\n'
                            'static int is_digit(int c)\n{\n    return c == 1;\n}\n'
                            'int ns_high(int x)\n{\n    return ns_low(x) * 2 + is_digit(x);\n}\n')},
     None, 'also defined in'),
    ('third-party type in a public header', {
        'include/ns_high.h': '#include <uv.h>\nint ns_high(int x);\n'}, None, 'exposes <uv.h>'),
]


def build(root, files, cc):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)
    objs = []
    for path in files:
        if path.endswith('.c'):
            obj = os.path.join(root, os.path.basename(path) + '.o')
            subprocess.run([cc, '-c', '-O0', '-I', os.path.join(root, 'include'), '-o', obj,
                            os.path.join(root, path)], check=True)
            objs.append(obj)
    lib = os.path.join(root, 'libplanted.a')
    subprocess.run(['ar', 'rcs', lib] + objs, check=True)
    return lib


def run(check, files, layers, cc):
    with tempfile.TemporaryDirectory() as root:
        lib = build(root, files, cc)
        lp = os.path.join(root, 'layers.txt')
        with open(lp, 'w') as f:
            f.write(layers)
        p = subprocess.run([sys.executable, check, root, lp, lib], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr


def main():
    check, cc = sys.argv[1], sys.argv[2]
    failed = 0
    rc, out = run(check, CLEAN, LAYERS, cc)
    if rc != 0:
        print('clean tree refused:\n' + out)
        failed += 1
    for name, change, layers, expect in BREACHES:
        files = dict(CLEAN)
        files.update(change)
        if name == 'third-party type in a public header':
            # The check reads the header's text; high.c stays compilable without <uv.h>.
            files['src/proc/high.c'] = CLEAN['src/proc/high.c'].replace(
                '#include "ns_high.h"\n', 'int ns_high(int x);\n')
        rc, out = run(check, files, layers or LAYERS, cc)
        if rc == 0 or expect not in out:
            print('%s: not caught (exit %d, wanted "%s"):\n%s' % (name, rc, expect, out))
            failed += 1
        else:
            print('%s: caught' % name)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
