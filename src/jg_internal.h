/* Every internal declaration, for the unit tests and the tools that reach
 * inside the library (each says why next to its include). The library's own
 * files include their layer's header instead, so that the direction of the
 * layers shows: src/util/util.h <- src/codegen/codegen.h <-
 * src/runtime/runtime.h (tests/unit/check_layers.py checks it). Not installed. */
#ifndef JG_INTERNAL_H
#define JG_INTERNAL_H

#include "runtime/runtime.h"

#endif /* JG_INTERNAL_H */
