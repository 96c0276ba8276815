/* fuzz_typelib.c — libFuzzer target for type library parsing and validation: any bytes go
 * through wfl_typelib_parse (no shared object is opened), then every lookup is exercised. */
#include <stddef.h>
#include <stdint.h>

#include "../../common/wf_value.h"
#include "../../legacy/wfl_typelib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_types *types = wf_types_create();
    if (!types)
        return 0;
    wfl_typelib *tl = NULL;
    wf_diags *diags = wf_diags_create();
    wf_error err = WF_ERROR_INIT;
    if (wfl_typelib_parse(types, "fuzz.activities.xml", (const char *)data, size, &tl, diags,
                          &err) == WF_OK) {
        for (size_t i = 0; i < wfl_typelib_activity_count(tl); i++) {
            const wfl_tl_activity *a = wfl_typelib_activity_at(tl, i);
            const wfl_tl_func *fn = wfl_tl_activity_func(a);
            for (size_t j = 0; j < wfl_tl_func_param_count(fn); j++)
                (void)wfl_tl_func_param(fn, j)->name;
            (void)wfl_typelib_activity(tl, wfl_tl_activity_name(a));
        }
        for (size_t i = 0; i < wfl_typelib_class_count(tl); i++) {
            const wfl_tl_class *c = wfl_typelib_class_at(tl, i);
            for (size_t j = 0; j < wfl_tl_class_func_count(c); j++)
                (void)wfl_tl_func_return(wfl_tl_class_func_at(c, j));
        }
        for (size_t i = 0; i < wfl_typelib_service_count(tl); i++)
            (void)wfl_tl_service_method_count(wfl_typelib_service_at(tl, i));
        (void)wfl_typelib_exception(tl, "X");
    }
    wfl_typelib_destroy(tl);
    wf_diags_destroy(diags);
    wf_types_destroy(types);
    return 0;
}
