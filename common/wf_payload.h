/* wf_payload.h — the one rule that binds an event or bookmark payload to the parameters an
 * event declares, shared by both runtimes and every verb that delivers one (docs/formats.md
 * "Event payloads"). Pure: nothing is kept, nothing allocated but the result. */
#ifndef WF_PAYLOAD_H
#define WF_PAYLOAD_H

#include "wf_error.h"
#include "wf_value.h"

/* One declared parameter; `type` NULL takes any value unconverted. */
typedef struct wf_payload_param {
    const char *name;
    const wf_type *type;
} wf_payload_param;

/* Bind `payload` (NULL: null) to params[0..count):
 * - a JSON object that is not empty and whose keys are all parameter names gives each named
 *   parameter its field (the keyed form);
 * - otherwise, with exactly one parameter, the whole payload is that parameter's value;
 * - otherwise it is refused (WF_E_NAME naming a key no parameter has, WF_E_TYPE otherwise).
 * Every value is converted to its parameter's type; an object or array never converts to a
 * scalar type (WF_E_TYPE). OUT: a record with one field per parameter the payload gave, in
 * declaration order; on failure *out is null and err says why (no location: the caller's). */
wf_status wf_payload_bind(const wf_value *payload, const wf_payload_param *params, size_t count,
                          wf_value *out, wf_error *err);

#endif
