#!/usr/bin/env python3
"""Build step for the kernel-math test: copies named JG_DEV functions out of
a kernel template into a C header, behind shims for the few CUDA built-ins
they use, so that the CPU can run the kernel's own arithmetic.

    extract_device_functions.py TEMPLATE OUT.h NAME...

Each function must start with a line "JG_DEV <type> NAME(" (after a line
"template <...>", which comes along, for a C++ test) and end with a line
"}"; a missing one is an error."""
import re
import sys

SHIMS = r'''#ifndef JG_EXTRACT_SHIMS /* once, when two extracted headers meet */
#define JG_EXTRACT_SHIMS
#include <math.h>
#include <stdint.h>
#include <string.h>
#define JG_DEV static inline
static inline uint32_t __float_as_uint(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
#endif
'''


def main():
    template, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = open(template).read()
    parts = ['/* Generated from %s by extract_device_functions.py: do not edit. */' % template,
             SHIMS]
    for name in names:
        m = re.search(r'^(?:template <[^\n]*>\n)?JG_DEV [^\n(]*\b%s\(.*?^\}\n' % re.escape(name),
                      text, re.S | re.M)
        if not m:
            sys.exit('%s: no JG_DEV function %s' % (template, name))
        parts.append(m.group(0))
    open(out, 'w').write('\n'.join(parts))


main()
