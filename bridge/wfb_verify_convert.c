/* wfb_verify_convert.c — where `wfbridge verify` gets a converted definition when --converted
 * is not given: the one place the converter plugs in (wfc_convert_file_side, force_interop for
 * the Interop mode). A partial conversion's generated files are written into a directory that
 * goes first on the library path of the modern run (docs/convert.md "Interop"). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../converter/wfc_convert.h"
#include "../converter/wfc_output.h"
#include "wfb_interop.h"
#include "wfb_verify.h"

wf_status wfb_verify_libpath(const char *first, const wf_libpath *rest, wf_libpath **out,
                             wf_error *err)
{
    wf_buf dirs;
    wf_buf_init(&dirs);
    wf_buf_adds(&dirs, first);
    for (size_t i = 0; rest && i < wf_libpath_count(rest); i++)
        wf_buf_addf(&dirs, ":%s", wf_libpath_dir(rest, i));
    wf_status rc = dirs.oom ? wf_error_set(err, WF_E_NOMEM, NULL, "out of memory")
                            : wf_libpath_create(dirs.data, out, err);
    wf_buf_fini(&dirs);
    return rc;
}

void wfb_verify_written_free(wfb_verify_written *w, bool remove_files)
{
    for (size_t i = 0; i < w->count; i++) {
        if (remove_files)
            unlink(w->paths[i]);
        wf_free(w->paths[i]);
    }
    wf_free(w->paths);
    w->paths = NULL;
    w->count = 0;
}

static wf_status note_written(wfb_verify_written *w, const char *path, wf_error *err)
{
    return wfb__push_str(&w->paths, &w->count, path)
               ? WF_OK
               : wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
}

wf_status wfb_verify_convert(const wfb_verify_conv *vc, char **xaml, size_t *len,
                             wfb_verify_written *written, wf_error *err)
{
    *xaml = NULL;
    *len = 0;
    wfc_report *rep = NULL;
    wfc_sidecars side = WFC_SIDECARS_INIT;
    wf_status rc = wfc_report_create(&rep, err);
    wfc_file *f = rc == WF_OK ? wfc_report_add_file(rep, vc->path) : NULL;
    if (rc == WF_OK && !f)
        rc = wf_error_set(err, WF_E_NOMEM, NULL, "out of memory");
    if (rc == WF_OK) {
        wfc_opts o = WFC_OPTS_INIT;
        o.libpath = vc->libpath;
        o.rules_path = vc->rules;
        o.output_name = vc->output_name;
        o.force_interop = vc->force_interop;
        o.register_interop = wfb_interop_register;
        rc = wfc_convert_file_side(&o, vc->path, f, xaml, len, &side, err);
    }
    if (rc == WF_OK && side.count && !vc->side_dir)
        rc = wf_error_set(err, WF_E_USAGE, &(wf_loc){vc->path, 0, 0},
                          "the conversion generated files but no directory was given for them");
    for (size_t i = 0; rc == WF_OK && i < side.count; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/%s", vc->side_dir, side.items[i].name);
        rc = wfc_write_atomic(p, side.items[i].text, side.items[i].len, err);
        if (rc == WF_OK)
            rc = note_written(written, p, err);
    }
    if (rc != WF_OK) {
        wf_free(*xaml);
        *xaml = NULL;
        *len = 0;
    }
    wfc_sidecars_free(&side);
    wfc_report_destroy(rep);
    return rc;
}
