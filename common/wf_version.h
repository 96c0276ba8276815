/* wf_version.h — the one place the wfbridge version is written down: `wfbridge --version`, the
 * header of every converted file and the generated files all print this text. */
#ifndef WF_VERSION_H
#define WF_VERSION_H

#define WF_VERSION "0.1.0"

#endif
