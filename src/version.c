#include "agentwire/agentwire.h"

const char *aw_version(void) { return AGENTWIRE_VERSION_STRING; }
