/* agentwire — the wire layer for LLM agents. One include for everything. */
#ifndef AGENTWIRE_H
#define AGENTWIRE_H

#define AGENTWIRE_VERSION_MAJOR 0
#define AGENTWIRE_VERSION_MINOR 1
#define AGENTWIRE_VERSION_PATCH 0
#define AGENTWIRE_VERSION_STRING "0.1.0"

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "json.h"
#include "xml.h"
#include "utf8.h"
#include "event.h"
#include "thread.h"
#include "messages.h"
#include "transport.h"
#include "contract.h"
#include "snapshot.h"
#include "envelope.h"
#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string, e.g. "0.1.0". */
const char *aw_version(void);

#ifdef __cplusplus
}
#endif
#endif
