/* The recording NVTX injection library (nvtx_record.h): NVTX calls
 * InitializeInjectionNvtx2 once, which points the core module's RangePushA and
 * RangePop slots at the recorders. */
#include "nvtx_record.h"

#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <wchar.h>
#include <string.h>

static q35_nvtx_event *g_events;
static int g_n, g_cap, g_depth;

static void record(bool push, const char *name)
{
    if (g_n == g_cap) {
        const int cap = g_cap ? 2 * g_cap : 4096;
        q35_nvtx_event *e = realloc(g_events, (size_t)cap * sizeof *e);
        if (!e)
            return;
        g_events = e;
        g_cap = cap;
    }
    q35_nvtx_event *e = &g_events[g_n++];
    e->push = push;
    e->depth = g_depth;
    memset(e->name, 0, sizeof e->name);
    if (name)
        strncpy(e->name, name, sizeof e->name - 1);
}

static int NVTX_API push_a(const char *message)
{
    record(true, message);
    return g_depth++;
}

/* Ranges others push with attributes (a library's, say) are recorded too, so
 * the pops stay matched. */
static int NVTX_API push_ex(const nvtxEventAttributes_t *a)
{
    record(true, a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "(attributes)");
    return g_depth++;
}

static int NVTX_API push_w(const wchar_t *message)
{
    (void)message;
    record(true, "(wide)");
    return g_depth++;
}

static int NVTX_API pop(void)
{
    if (g_depth > 0)
        g_depth--;
    record(false, NULL);
    return g_depth;
}

int q35_nvtx_record_count(void)
{
    return g_n;
}

const q35_nvtx_event *q35_nvtx_record_at(int i)
{
    return i >= 0 && i < g_n ? &g_events[i] : NULL;
}

void q35_nvtx_record_clear(void)
{
    g_n = 0;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *etbl = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!etbl || !etbl->GetModuleFunctionTable || !etbl->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) ||
        size <= NVTX_CBID_CORE_RangePop)
        return 0;
    *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)push_a;
    *table[NVTX_CBID_CORE_RangePushEx] = (NvtxFunctionPointer)push_ex;
    *table[NVTX_CBID_CORE_RangePushW] = (NvtxFunctionPointer)push_w;
    *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)pop;
    return 1;
}
