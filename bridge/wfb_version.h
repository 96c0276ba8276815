/* wfb_version.h — `wfbridge --version` prints "wfbridge VERSION", the version of
 * common/wf_version.h (the converter writes the same one into every file it makes). */
#ifndef WFB_VERSION_H
#define WFB_VERSION_H

#include "../common/wf_version.h"

#define WFB_VERSION WF_VERSION

#endif
