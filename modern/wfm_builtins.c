/* wfm_builtins.c — fills a catalogue with every built-in modern activity kind: the core
 * activities and the structured ones (wfm_acts.h). The runtime calls it once
 * per catalogue, before any definition is loaded (docs/architecture.md "Activity catalogue"). */
#include "wfm_acts.h"
#include "wfm_sched_int.h"

wf_status wfm__builtins_register(wfm_catalogue *cat, wf_error *err)
{
    wf_status st = wfm_acts_core_register(cat, err);
    if (st == WF_OK)
        st = wfm_acts_register(cat, err);
    if (st == WF_OK)
        st = wfm_act_persist_register(cat, err);
    st = st == WF_OK ? wfm_acts_coll_register(cat, err) : st; /* wfm_act_coll.c */
    st = st == WF_OK ? wfm_act_type_register(cat, err) : st;  /* wfm_act_type.c */
    st = st == WF_OK ? wfm_act_msg_register(cat, err) : st;   /* wfm_act_msg.c */
    st = st == WF_OK ? wfm_act_send_register(cat, err) : st;  /* wfm_act_send.c */
    return st;
}
