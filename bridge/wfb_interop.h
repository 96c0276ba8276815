/* wfb_interop.h — the Interop activity: a modern activity kind that hosts one legacy activity
 * of a type library (a native leaf, or a composite whose body is XOML) inside a modern
 * workflow, driving the legacy executor from the modern scheduler (docs/architecture.md
 * "The bridge", docs/semantics.md §6).
 *
 * 1. wfb_interop_register(wfm_runtime_catalogue(rt), &err) before the first load.
 * 2. XAML: <Interop ActivityType="p:TypeName" Sku="[sku]" TicketOut="[ticket]" .../> where p
 *    maps "clr-namespace:NS;Assembly=NAME" to the type library NAME.activities.xml on the
 *    library path. Each property P of the type is an In argument P and an Out argument POut
 *    (Direction="Return": POut only); when a name would clash every In argument is PIn.
 *    Name= is the metadata property (the legacy activity's name), a literal.
 * 3. Each execution runs the legacy activity from fresh state; legacy queues become bookmarks
 *    named like the queue, legacy timers durable timers; faults become exceptions of the
 *    legacy type; the hosted state persists with the modern instance.
 * Thread rule: as for every kind, callbacks of one instance run on one thread at a time. */
#ifndef WFB_INTEROP_H
#define WFB_INTEROP_H

#include "../common/wf_error.h"
#include "../modern/wfm_activity.h"

/* The element name and namespace (the activities namespace, as WF4 writes Interop). */
#define WFB_INTEROP_KIND "Interop"

/* Register the Interop kind. WF_E_STATE when already registered. */
wf_status wfb_interop_register(wfm_catalogue *cat, wf_error *err);

#endif
