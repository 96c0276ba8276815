/* wfb_version.h — the one place the wfbridge version is written down; `wfbridge --version`
 * prints it as "wfbridge VERSION". */
#ifndef WFB_VERSION_H
#define WFB_VERSION_H

#define WFB_VERSION "0.1.0"

#endif
