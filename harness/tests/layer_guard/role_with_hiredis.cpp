// Not part of any build: ctest's layer_guard test compiles it with the roles layer's flags and
// expects the compiler to refuse it. Role code reaches Redis through the ports, never hiredis.
#include <hiredis/hiredis.h>

#include "roles/roles.h"

int role_that_reaches_around_the_ports(redisContext* c) { return c ? 1 : 0; }
