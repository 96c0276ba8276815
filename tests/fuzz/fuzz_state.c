/* fuzz_state.c — libFuzzer target for saved modern instance states (modern/wfm_persist.c):
 * the input is restored against one fixed definition (loaded from the string below, so the
 * seeds in corpus/fuzz_state/ — real saved states of it — pass the hash check) and rendered
 * with wfm_state_to_json. Errors are expected; a crash, leak or sanitizer report is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_error.h"
#include "../../common/wf_mem.h"
#include "../../modern/wfm_persist.h"
#include "../../modern/wfm_runtime.h"

/* Variables with shadowing, a While, a ForEach, a Delay timer, a Pick, a completed
 * CompensableActivity and a TryCatch, all waiting at once; the bookmarks are a, b, step,
 * each1, each2, t, then c (inside the Catch). */
static const char fuzz_state_xaml[] =
    "<Activity x:Class=\"Fuzz.State\" "
    "xmlns=\"http://schemas.microsoft.com/netfx/2009/xaml/activities\" "
    "xmlns:s=\"clr-namespace:System;assembly=mscorlib\" "
    "xmlns:x=\"http://schemas.microsoft.com/winfx/2006/xaml\">\n"
    "  <x:Members><x:Property Name=\"Out\" Type=\"OutArgument(x:String)\" /></x:Members>\n"
    "  <Parallel>\n"
    "    <Parallel.Variables><Variable x:TypeArguments=\"x:Int32\" Name=\"n\" Default=\"1\" />"
    "</Parallel.Variables>\n"
    "    <Sequence>\n"
    "      <Sequence.Variables><Variable x:TypeArguments=\"x:String\" Name=\"n\" "
    "Default=\"s\" /></Sequence.Variables>\n"
    "      <While Condition=\"[n.Length &lt; 3]\">\n"
    "        <Sequence><WaitForEvent x:TypeArguments=\"x:String\" BookmarkName=\"step\" "
    "Result=\"[Out]\" /><Assign x:TypeArguments=\"x:String\" To=\"[n]\" Value=\"[n + Out]\" />"
    "</Sequence>\n"
    "      </While>\n"
    "    </Sequence>\n"
    "    <ForEach x:TypeArguments=\"x:Int32\" Values=\"[new List&lt;int&gt; { 1, 2 }]\">\n"
    "      <ActivityAction x:TypeArguments=\"x:Int32\">\n"
    "        <ActivityAction.Argument><DelegateInArgument x:TypeArguments=\"x:Int32\" "
    "Name=\"v\" /></ActivityAction.Argument>\n"
    "        <WaitForEvent x:TypeArguments=\"x:Int32\" BookmarkName=\"[&quot;each&quot; + v]\" "
    "Result=\"[n]\" />\n"
    "      </ActivityAction>\n"
    "    </ForEach>\n"
    "    <Delay Duration=\"00:01:00\" />\n"
    "    <Pick>\n"
    "      <PickBranch><PickBranch.Trigger><WaitForEvent x:TypeArguments=\"x:Object\" "
    "BookmarkName=\"a\" /></PickBranch.Trigger><WriteLine Text=\"a\" /></PickBranch>\n"
    "      <PickBranch><PickBranch.Trigger><WaitForEvent x:TypeArguments=\"x:Object\" "
    "BookmarkName=\"b\" /></PickBranch.Trigger><WriteLine Text=\"b\" /></PickBranch>\n"
    "    </Pick>\n"
    "    <Sequence>\n"
    "      <CompensableActivity><CompensableActivity.Variables><Variable "
    "x:TypeArguments=\"x:Int32\" Name=\"r\" Default=\"4\" /></CompensableActivity.Variables>"
    "<CompensableActivity.Body><Assign x:TypeArguments=\"x:Int32\" To=\"[r]\" "
    "Value=\"[r + 1]\" /></CompensableActivity.Body><CompensableActivity.CompensationHandler>"
    "<WriteLine Text=\"[&quot;undo &quot; + r]\" /></CompensableActivity.CompensationHandler>"
    "</CompensableActivity>\n"
    "      <TryCatch><TryCatch.Try><Sequence><WaitForEvent x:TypeArguments=\"x:Int32\" "
    "BookmarkName=\"t\" Result=\"[n]\" /><Throw Exception=\"[new "
    "InvalidOperationException(&quot;x&quot;)]\" /></Sequence></TryCatch.Try>"
    "<TryCatch.Catches><Catch x:TypeArguments=\"s:InvalidOperationException\"><ActivityAction "
    "x:TypeArguments=\"s:InvalidOperationException\"><ActivityAction.Argument>"
    "<DelegateInArgument x:TypeArguments=\"s:InvalidOperationException\" Name=\"e\" />"
    "</ActivityAction.Argument><WaitForEvent x:TypeArguments=\"x:Object\" BookmarkName=\"c\" />"
    "</ActivityAction></Catch></TryCatch.Catches></TryCatch>\n"
    "    </Sequence>\n"
    "  </Parallel>\n"
    "</Activity>\n";

static wfm_runtime *runtime;
static wfm_definition *definition;

static void quiet(void *ud, const char *text, size_t len)
{
    (void)ud;
    (void)text;
    (void)len;
}

static void fuzz_init(void)
{
    wf_error err = WF_ERROR_INIT;
    wfm_runtime_opts o = WFM_RUNTIME_OPTS_INIT;
    o.worker_count = 1;
    o.write = quiet;
    if (wfm_runtime_create(&o, &runtime, &err) != WF_OK ||
        wfm_runtime_load_mem(runtime, "fuzz_state.xaml", fuzz_state_xaml,
                             sizeof fuzz_state_xaml - 1, &definition, NULL, &err) != WF_OK)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!runtime)
        fuzz_init();
    wfm_instance *inst = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfm_instance_restore(runtime, definition, data, size, &inst, &err);
    if (rc != WF_OK && inst)
        abort();
    if (rc == WF_OK) { /* a state that restores can be saved again */
        wf_buf again;
        wf_buf_init(&again);
        wfm_instance_save(inst, &again, NULL);
        wf_buf_fini(&again);
    }
    wfm_instance_destroy(inst);
    wf_buf json;
    wf_buf_init(&json);
    wfm_state_to_json(runtime, data, size, &json, NULL);
    wf_buf_fini(&json);
    wfm_state_info info;
    wfm_state_peek(data, size, &info, NULL);
    return 0;
}
