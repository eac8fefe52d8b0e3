/* An NVTX injection library for the tests (loaded by NVTX itself through
 * NVTX_INJECTION64_PATH; no profiler needed): it records every range push and
 * pop, in order, with its depth. A test reaches the record through dlopen of
 * the same path (the library NVTX loaded) and these functions. */
#ifndef Q35_PARITY_NVTX_RECORD_H
#define Q35_PARITY_NVTX_RECORD_H

#include <stdbool.h>

typedef struct q35_nvtx_event {
    bool push;          /* a push (name, depth) or a pop */
    int depth;          /* of the range pushed or popped: 0 for a top-level one */
    char name[64];      /* a push's message */
} q35_nvtx_event;

/* The events recorded so far, and clearing them. */
typedef int (*q35_nvtx_record_count_fn)(void);
typedef const q35_nvtx_event *(*q35_nvtx_record_at_fn)(int i);
typedef void (*q35_nvtx_record_clear_fn)(void);

int q35_nvtx_record_count(void);
const q35_nvtx_event *q35_nvtx_record_at(int i);
void q35_nvtx_record_clear(void);

#endif /* Q35_PARITY_NVTX_RECORD_H */
