/* arc4random for a host whose glibc predates 2.36 (where glibc added it),
 * preloaded by scripts/device-llvm.sh there for the packed libLLVM, whose
 * need of GLIBC_2.36 elf_weak_version.py made weak. Defined at that version
 * (arc4random.map), so the library's versioned reference binds to it. */
#include <stdint.h>
#include <sys/random.h>

uint32_t arc4random(void);

uint32_t arc4random(void)
{
    uint32_t v = 0;
    while (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        ;
    return v;
}
