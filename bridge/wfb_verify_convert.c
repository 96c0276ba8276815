/* wfb_verify_convert.c — where `wfbridge verify` gets a converted definition when --converted
 * is not given: the one place the converter plugs in (wfc_convert_file with
 * force_interop for the Interop mode). Until the converter is part of the build it says so. */
#include "wfb_verify.h"

wf_status wfb_verify_convert(const char *path, const char *rules, const wf_libpath *libpath,
                             bool force_interop, char **xaml, size_t *len, wf_error *err)
{
    /* With converter/wfc_convert.h this becomes:
     *   wfc_opts o = WFC_OPTS_INIT; o.libpath = libpath; o.rules_path = rules;
     *   o.force_interop = force_interop; wfc_report + wfc_file for `path`, then
     *   return wfc_convert_file(&o, path, file, xaml, len, err); */
    (void)rules, (void)libpath, (void)force_interop;
    *xaml = NULL;
    *len = 0;
    return wf_error_set(err, WF_E_UNSUPPORTED, &(wf_loc){path, 0, 0},
                        "converter not available: pass --converted FILE.xaml");
}
