/* fuzz_legacy_blob.c — libFuzzer target for the legacy executor's state blob: the input is the
 * payload; a valid header (magic, version, length, checksum) is put in front so the fuzzer
 * reaches the payload reader and the instance restore. Every outcome must be WF_OK or a clean
 * WF_E_CORRUPT / WF_E_NOMEM with nothing leaked; a restored executor is saved and run. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_value.h"
#include "../../legacy/wfl_def.h"
#include "../../legacy/wfl_exec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char xoml[] =
    "<SequentialWorkflowActivity x:Name=\"Flow\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\" "
    "xmlns=\"http://schemas.microsoft.com/winfx/2006/xaml/workflow\">"
    "<ListenActivity x:Name=\"listen1\">"
    "<EventDrivenActivity x:Name=\"a\"><DelayActivity x:Name=\"d1\" TimeoutDuration=\"00:00:01\"/>"
    "<CodeActivity x:Name=\"c1\"/></EventDrivenActivity>"
    "<EventDrivenActivity x:Name=\"b\"><DelayActivity x:Name=\"d2\" TimeoutDuration=\"00:00:02\"/>"
    "</EventDrivenActivity></ListenActivity>"
    "<ParallelActivity x:Name=\"par\"><SequenceActivity x:Name=\"s1\"><CodeActivity x:Name=\"c2\"/>"
    "</SequenceActivity><SequenceActivity x:Name=\"s2\"/></ParallelActivity>"
    "</SequentialWorkflowActivity>";

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void exercise(const wfl_definition *def, const uint8_t *blob, size_t len)
{
    wfl_exec *ex = NULL;
    if (wfl_exec_restore(def, NULL, blob, len, &ex, NULL) != WF_OK)
        return;
    void *again = NULL;
    size_t n = 0;
    if (wfl_exec_save(ex, &again, &n, NULL) == WF_OK)
        wf_free(again);
    wfl_exec_state st;
    if (wfl_exec_state_get(ex) == WFL_EXEC_IDLE)
        wfl_exec_fire_timers(ex, INT64_MAX, &st, NULL);
    wfl_exec_destroy(ex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_types *types = wf_types_create();
    wfl_definition *def = NULL;
    uint8_t *blob = wf_malloc(size + 24);
    wfl_load_opts o = WFL_LOAD_OPTS_INIT;
    o.types = types;
    if (types && blob &&
        wfl_definition_load_mem(&o, "fuzz.xoml", xoml, sizeof xoml - 1, &def, NULL) == WF_OK) {
        memcpy(blob, "WFLX\x02\0\0\0", 8); /* blob version 2 */
        put64(blob + 8, size);
        put64(blob + 16, wf_hash_bytes(data, size));
        if (size)
            memcpy(blob + 24, data, size);
        exercise(def, blob, size + 24);
        /* and the raw bytes as a whole blob */
        exercise(def, data, size);
    }
    wfl_definition_destroy(def);
    wf_free(blob);
    wf_types_destroy(types);
    return 0;
}
