/* fuzz_xaml.c — libFuzzer target for the XAML loader: load the input from memory against the
 * built-in catalogue (wfm__builtins_register), collecting every diagnostic, and walk the
 * loaded tree when it loads. Any crash, leak or sanitizer report is a bug; load errors are
 * expected outcomes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/wf_error.h"
#include "../../modern/wfm_definition_int.h"
#include "../../modern/wfm_definition.h"
#include "../../modern/wfm_sched_int.h"

static wfm_catalogue *catalogue;
static wf_types *types;

static void fuzz_init(void)
{
    wf_error err = WF_ERROR_INIT;
    types = wf_types_create();
    if (!types || wfm_catalogue_create(&catalogue, &err) != WF_OK ||
        wfm__builtins_register(catalogue, &err) != WF_OK)
        abort();
}

/* Every node reachable by index has a kind, an id and consistent property arrays. */
static void walk(const wfm_definition *def)
{
    for (size_t i = 0; i < wfm_definition_node_count(def); i++) {
        const wfm_node *n = wfm_definition_node_at(def, i);
        if (!wfm_node_id(n) || n->index != i || !wfm_node_kind(n))
            abort();
        const wfm_kind_spec *spec = wfm_kind_spec_of(n->kind);
        for (unsigned p = 0; p < spec->prop_count; p++) {
            wfm_prop_kind kind = spec->props[p].kind;
            bool nodes = kind == WFM_PROP_ACTIVITIES || kind == WFM_PROP_NODES;
            for (size_t k = 0; nodes && k < wfm_node_count(n, p); k++)
                if (!wfm_node_at(n, p, k))
                    abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!catalogue)
        fuzz_init();
    wf_diags *diags = wf_diags_create();
    wfm_load_opts opts = WFM_LOAD_OPTS_INIT;
    opts.catalogue = catalogue;
    opts.types = types;
    opts.diags = diags;
    wfm_definition *def = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status rc = wfm_definition_load_mem(&opts, "fuzz.xaml", (const char *)data, size, &def,
                                           &err);
    if (rc == WF_OK)
        walk(def);
    else if (def)
        abort();
    wfm_definition_release(def);
    wf_diags_destroy(diags);
    return 0;
}
