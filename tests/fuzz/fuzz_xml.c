/* fuzz_xml.c — libFuzzer target for the hardened XML loader: any input must either load (and
 * then every node, attribute and location is walked) or fail with a status, never crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../common/wf_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t walk(const wf_xml_node *node)
{
    size_t n = 0;
    for (; node; node = node->next) {
        n += strlen(node->name) + strlen(node->text) + node->line + node->col;
        for (size_t i = 0; i < node->attr_count; i++)
            n += strlen(node->attrs[i].value) + node->attrs[i].value_col;
        n += wf_xml_lookup_ns(node, NULL) != NULL;
        n += walk(node->first_child);
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wf_xml_limits lim = {0, 64, 100000};
    wf_xml_doc *doc = NULL;
    wf_error err = WF_ERROR_INIT;
    wf_status st = wf_xml_load_mem("fuzz.xml", (const char *)data, size, &lim, &doc, &err);
    if (st == WF_OK) {
        volatile size_t sink = walk(wf_xml_root(doc));
        (void)sink;
    }
    wf_xml_doc_destroy(doc);
    return 0;
}
