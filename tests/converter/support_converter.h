/* support_converter.h — what the converter tests share: converting a fixture, running a
 * legacy definition and a converted one on the same inputs through both runtimes' C APIs,
 * and comparing their outcomes (docs/convert.md "Testing a conversion"). */
#ifndef SUPPORT_CONVERTER_H
#define SUPPORT_CONVERTER_H

#include <stdbool.h>
#include <stddef.h>

#include "../../common/wf_error.h"
#include "../../converter/wfc_report.h"

/* The library path every converter test uses: BUILD/tests/lib:BUILD/samples/lib. */
const char *wfc_test_lib_dirs(void);

/* One run's inputs, as one line of a case's `inputs` file:
 * "arg NAME=VALUE ... event NAME=PAYLOAD ... expect NAME=TEXT ..." (tokens separated by
 * spaces; a PAYLOAD is JSON when it parses, else a string). An `expect` is what WF3 itself
 * gives: output NAME as TEXT (a string as it is, other values as JSON), or `state=S` (Closed,
 * Idle, Failed); both runtimes must give it. */
typedef struct wfc_test_inputs {
    char *args[16];
    size_t arg_count;
    char *events[8];
    size_t event_count;
    char *expects[8];
    size_t expect_count;
} wfc_test_inputs;

void wfc_test_inputs_parse(const char *line, wfc_test_inputs *out);
void wfc_test_inputs_free(wfc_test_inputs *in);

/* Run `xoml` on the legacy runtime and `xaml` on the modern one with the same inputs and
 * assert the same outcome: Closed/Idle alike, a fault or termination alike, and every modern
 * output equal to the legacy root property of that name (exceptions by type). */
void wfc_test_same_outcome(const char *xoml, const char *xaml, const wfc_test_inputs *in);

#endif
