/* The prefill's CUDA graphs (paths.graphs, the switch graphs=on, on the paths
 * q35_paths_graph_ok names; cuda_internal.h).
 *
 * A chunk's layers are launched as graphs, one a layer: each layer's launches
 * are captured from the model's stream (cudaStreamBeginCapture, thread-local
 * mode: a call that is not allowed while capturing fails instead of running
 * against the capture), the capture is applied to the layer's kept executable
 * graph (cudaGraphExecUpdate: same nodes, new arguments: the chunk's
 * positions, the workspace's pointers), or instantiated where there is none or
 * the nodes changed, and the executable graph is launched on the stream. Every
 * chunk is captured anew, so nothing a graph holds can go stale; what a graph
 * saves is device-side: the gaps between a layer's ~10-20 launches. A layer a
 * graph, not a chunk: the device starts on layer 0 while the host captures
 * layer 1, where one graph a chunk would hold the device idle for the whole
 * chunk's capture and update at every call's start.
 *
 * The same kernels with the same arguments in the same order: a graph's
 * results are bitwise the plain launches' (test_cuda_model_graphs checks it).
 * Two things could break that, and neither is captured:
 *   - the tuned cuBLASLt GEMM times a new shape's candidates (events and a
 *     host wait: not capturable; under a capture it takes the heuristic's
 *     first, kernels/gemm_lt.h). So a chunk row count runs plain the first
 *     time after the paths are set (its shapes tuned; a timed call's chunks
 *     count), and only later chunks of that row count run as graphs; the
 *     key is the row count and the state's cache element (its shapes differ
 *     with it). Known limit: the tuned GEMM keeps 64 shapes, oldest out
 *     first; a process that runs more than ~10 row counts on one paths
 *     setting can lose a warm row count's shapes, which are then captured
 *     with the heuristic's first choice (the same math, other bits);
 *   - per-op timing (CUDA events around each op, read after the call): a
 *     timed call runs plain, so the per-op times are always the plain
 *     launches'.
 * A prefill's tail runs plain.
 *
 * The decode step (paths.decode_graph, the switch decode-graph, on by default)
 * is one graph: embedding, every layer, the tail's norm and lm_head. Its
 * launches do not change from step to step: the per-token path reads the
 * position from cm->dpos (the kernels' _at forms) and writes K and V through
 * buffers, never at a position's address, so the graph is captured once and
 * replayed; captured anew only where what it baked in changed (the state's
 * memory and layout, its cache element, the workspace, whether it ends in
 * logits: q35_decode_key) or the paths were set again. Up to
 * Q35_DECODE_GRAPHS are kept (the least recently run replaced), so states
 * decoded in turn each replay their own. The per-token launches are all the
 * project's own kernels (no cuBLAS), so every path can take it. The same
 * kernels with the same arguments: bitwise the plain step
 * (test_cuda_model_graphs). A timed step runs plain. NVTX: a step's ranges are pushed when it is captured; a
 * replayed step pushes only its "forward_token" and "chunk" ranges (a
 * profile shows the graph's kernels under its one launch).
 *
 * The switch decode-overlap: before the decode graph is instantiated, every
 * edge from a kernel to a kernel that waits for the grid before it at its
 * start (griddepcontrol.wait before any memory access: k_waits_first, by the
 * kernel's name) is made programmatic, so that kernel launches once every
 * block of the one before has started (they trigger at their start) and its
 * blocks wait resident; the wait ends when that grid has completed and its
 * writes are seen, and a kernel completes only after its own wait, so every
 * kernel before it has too. An edge into any other kernel stays as it was.
 * The same kernels, each reading and writing only after its wait: the same
 * bits (test_cuda_model_graphs).
 *
 * Executable graphs are kept per (layer, chunk kind): kind 0 for chunks of the
 * paths' chunk rows, kind 1 for any other row count (a prompt's last chunk),
 * so the two alternate without instantiating again. */
#include "cuda_internal.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

void q35_graphs_reset(q35_cuda_model *cm)
{
    q35_graphs *g = &cm->graphs;
    if (g->exec) {
        for (int i = 0; i < 2 * g->n; i++)
            if (g->exec[i])
                cudaGraphExecDestroy((cudaGraphExec_t)g->exec[i]);
        free(g->exec);
    }
    g->exec = NULL;
    g->n = 0;
    g->n_warm = 0;
    for (int i = 0; i < Q35_DECODE_GRAPHS; i++) {
        if (g->decode[i])
            cudaGraphExecDestroy((cudaGraphExec_t)g->decode[i]);
        g->decode[i] = NULL;
    }
}

/* What a chunk's GEMM shapes depend on besides the paths: its rows, and
 * whether the state's caches hold f16 (the merged [q | k | v] projection runs
 * only over an f16 cache), so a state of the other kind runs plain first. */
static int64_t warm_key(const q35_run *r)
{
    return 2 * r->T + (r->st->kv_f16 ? 1 : 0);
}

/* Whether chunks of this key ran plain since the paths were set. */
static bool warm(const q35_graphs *g, int64_t key)
{
    for (int i = 0; i < g->n_warm; i++)
        if (g->warm[i] == key)
            return true;
    return false;
}

bool q35_graphs_chunk(q35_run *r)
{
    const q35_cuda_model *cm = r->cm;
    return q35_paths_graphs(&cm->paths) && !r->per_token && !r->times && warm(&cm->graphs, warm_key(r));
}

void q35_graphs_ran_plain(q35_run *r)
{
    q35_graphs *g = &r->cm->graphs;
    const int64_t key = warm_key(r);
    if (!q35_paths_graphs(&r->cm->paths) || r->per_token || warm(g, key))
        return;
    g->warm[g->n_warm < Q35_GRAPH_WARM ? g->n_warm++ : Q35_GRAPH_WARM - 1] = key; /* full: the last slot turns over */
    g->stats.plain_chunks++;
}

/* The slot of layer il's executable graph for this chunk (NULL: out of memory). */
static void **slot(q35_run *r, int il, q35_error *err)
{
    q35_graphs *g = &r->cm->graphs;
    if (!g->exec) {
        const int n = r->cm->hp.n_layer;
        g->exec = calloc((size_t)(2 * n), sizeof *g->exec);
        if (!g->exec) {
            q35_fail(err, "CUDA graphs: out of memory for %d layers' executable graphs", n);
            return NULL;
        }
        g->n = n;
    }
    return &g->exec[2 * il + (r->T == r->cm->paths.chunk_rows ? 0 : 1)];
}

/* The captured graph applied to the kept executable graph *exec, or a new one
 * made in its place where there is none or its nodes differ. */
static int instantiate(q35_graphs *g, void **exec, cudaGraph_t graph, q35_error *err)
{
    if (*exec) {
        cudaGraphExecUpdateResultInfo info;
        const cudaError_t e = cudaGraphExecUpdate((cudaGraphExec_t)*exec, graph, &info);
        if (e == cudaSuccess) {
            g->stats.updated++;
            return 0;
        }
        (void)cudaGetLastError(); /* not sticky; the next launch's check would take it for its own */
        cudaGraphExecDestroy((cudaGraphExec_t)*exec); /* any refusal: made anew, failing only if that fails */
        *exec = NULL;
    }
    cudaGraphExec_t made = NULL;
    if (Q35_CUDA_CHECK(cudaGraphInstantiate(&made, graph, 0), err)) {
        (void)cudaGetLastError();
        return -1;
    }
    *exec = made;
    g->stats.instantiated++;
    return 0;
}

/* body(r, l)'s launches captured from the model's stream into *graph (thread-
 * local mode: a call not allowed while capturing fails instead of running
 * against the capture). -1 with nothing kept where the body or the capture
 * failed; the stream leaves capture mode either way. */
static int capture(q35_run *r, const q35_dlayer *l, q35_graph_body body, cudaGraph_t *graph)
{
    const cudaStream_t stream = (cudaStream_t)r->cm->stream;
    *graph = NULL;
    if (Q35_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), r->err)) {
        (void)cudaGetLastError();
        return -1;
    }
    const int rc = body(r, l);
    const cudaError_t ended = cudaStreamEndCapture(stream, graph); /* always: the stream must leave capture mode */
    if (rc || Q35_CUDA_CHECK(ended, r->err)) {
        if (*graph)
            cudaGraphDestroy(*graph);
        *graph = NULL;
        (void)cudaGetLastError();
        return -1;
    }
    return 0;
}

int q35_graphs_layer(q35_run *r, const q35_dlayer *l, q35_graph_body body)
{
    q35_cuda_model *cm = r->cm;
    const cudaStream_t stream = (cudaStream_t)cm->stream;
    void **exec = slot(r, l->index, r->err);
    if (!exec)
        return -1;
    cudaGraph_t graph = NULL;
    if (capture(r, l, body, &graph))
        return q35_fail_context(r->err, "capturing layer %d into a CUDA graph", l->index);
    cm->graphs.stats.layers_captured++;
    int failed = instantiate(&cm->graphs, exec, graph, r->err);
    cudaGraphDestroy(graph);
    if (!failed && Q35_CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)*exec, stream), r->err)) {
        (void)cudaGetLastError();
        failed = 1;
    }
    if (failed)
        return q35_fail_context(r->err, "the CUDA graph of layer %d", l->index);
    cm->graphs.stats.launched++;
    return 0;
}

static bool same_key(const q35_decode_key *a, const q35_decode_key *b)
{
    return a->conv == b->conv && a->ssm == b->ssm && a->k_cache == b->k_cache && a->v_cache == b->v_cache &&
           a->max_seq == b->max_seq && a->kv_f16 == b->kv_f16 && a->ws_mem == b->ws_mem && a->tail == b->tail;
}

/* The kernels that wait for the grid before them first (q35_grid_dependency_wait
 * at their start, before any memory access), by a part of their (mangled)
 * names: kernels/gemv_q8.cuh, norm_kernels.cuh (the 8-bit forms), pointwise.cu
 * (the 8-bit forms), delta_prep.cuh, delta_rule_scan.cuh, attn_prep.cu,
 * attention_decode.cu, attention_decode_split.cu, embedding.cu. */
static const char *const k_waits_first[] = {
    "gemv_q8_kernel",         "q35_norm_q8_kernel",      "q35_pointwise_q8_kernel", "q35_delta_prep_kernel",
    "q35_delta_scan_kernel",  "q35_attn_prep_kernel",    "q35_decode_split_kernel", "q35_decode_split_combine",
    "q35_decode_block_kernel", "q35_decode_cluster_kernel", "q35_embedding_kernel"};

static bool kernel_node(cudaGraphNode_t node)
{
    enum cudaGraphNodeType type;
    return cudaGraphNodeGetType(node, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel;
}

static bool waits_first(cudaGraphNode_t node)
{
    struct cudaKernelNodeParams kp;
    const char *name = NULL;
    if (!kernel_node(node) || cudaGraphKernelNodeGetParams(node, &kp) != cudaSuccess ||
        cudaFuncGetName(&name, kp.func) != cudaSuccess || !name) {
        (void)cudaGetLastError(); /* not sticky: not a kernel we know, its edge kept */
        return false;
    }
    for (size_t i = 0; i < sizeof k_waits_first / sizeof k_waits_first[0]; i++)
        if (strstr(name, k_waits_first[i]))
            return true;
    return false;
}

/* decode-overlap: graph's plain edges from a kernel into a kernel that waits
 * first, made programmatic; *made counts them. */
static int overlap_edges(cudaGraph_t graph, int64_t *made, q35_error *err)
{
    size_t n = 0;
    *made = 0;
    if (Q35_CUDA_CHECK(cudaGraphGetEdges(graph, NULL, NULL, NULL, &n), err))
        return -1;
    cudaGraphNode_t *from = malloc((n ? n : 1) * sizeof *from), *to = malloc((n ? n : 1) * sizeof *to);
    cudaGraphEdgeData *ed = calloc(n ? n : 1, sizeof *ed);
    int rc = !from || !to || !ed ? q35_fail(err, "decode-overlap: out of memory for %zu edges", n)
                                 : Q35_CUDA_CHECK(cudaGraphGetEdges(graph, from, to, ed, &n), err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (ed[i].type != cudaGraphDependencyTypeDefault || ed[i].from_port != cudaGraphKernelNodePortDefault ||
            !kernel_node(from[i]) || !waits_first(to[i]))
            continue;
        cudaGraphEdgeData pe;
        memset(&pe, 0, sizeof pe);
        pe.from_port = cudaGraphKernelNodePortProgrammatic;
        pe.type = cudaGraphDependencyTypeProgrammatic;
        rc = Q35_CUDA_CHECK(cudaGraphRemoveDependencies(graph, &from[i], &to[i], &ed[i], 1), err) ||
             Q35_CUDA_CHECK(cudaGraphAddDependencies(graph, &from[i], &to[i], &pe, 1), err);
        *made += rc == 0;
    }
    free(from);
    free(to);
    free(ed);
    return rc ? -1 : 0;
}

int q35_graphs_decode(q35_run *r, q35_graph_body body)
{
    q35_cuda_model *cm = r->cm;
    q35_graphs *g = &cm->graphs;
    const cudaStream_t stream = (cudaStream_t)cm->stream;
    const q35_cuda_state *st = r->st;
    const q35_decode_key key = {st->conv, st->ssm,      st->k_cache, st->v_cache,
                                st->max_seq, st->kv_f16, cm->ws_mem,  r->n_keep > 0};
    int at = -1, oldest = 0;
    for (int i = 0; i < Q35_DECODE_GRAPHS && at < 0; i++) {
        if (g->decode[i] && same_key(&g->decode_key[i], &key))
            at = i;
        else if (!g->decode[i] || (g->decode[oldest] && g->decode_used[i] < g->decode_used[oldest]))
            oldest = i;
    }
    if (at < 0) { /* captured into the free or least recently run slot */
        at = oldest;
        if (g->decode[at])
            cudaGraphExecDestroy((cudaGraphExec_t)g->decode[at]);
        g->decode[at] = NULL;
        cudaGraph_t graph = NULL;
        cudaGraphExec_t made = NULL;
        size_t nodes = 0;
        int64_t programmatic = 0;
        const int failed = capture(r, NULL, body, &graph) ||
                           Q35_CUDA_CHECK(cudaGraphGetNodes(graph, NULL, &nodes), r->err) ||
                           (q35_paths_decode_overlap(&cm->paths) && overlap_edges(graph, &programmatic, r->err)) ||
                           Q35_CUDA_CHECK(cudaGraphInstantiate(&made, graph, 0), r->err);
        g->stats.decode_nodes = failed ? 0 : (int64_t)nodes;
        g->stats.decode_programmatic = failed ? 0 : programmatic;
        if (graph)
            cudaGraphDestroy(graph);
        if (failed) {
            (void)cudaGetLastError();
            return q35_fail_context(r->err, "capturing the decode step into a CUDA graph");
        }
        g->decode[at] = made;
        g->decode_key[at] = key;
        g->stats.decode_captured++;
    }
    if (Q35_CUDA_CHECK(cudaGraphLaunch((cudaGraphExec_t)g->decode[at], stream), r->err)) {
        (void)cudaGetLastError();
        return q35_fail_context(r->err, "the decode step's CUDA graph");
    }
    g->decode_used[at] = ++g->stats.decode_launched;
    return 0;
}

const q35_cuda_graph_stats *q35_cuda_model_graph_stats(const q35_cuda_model *cm)
{
    return &cm->graphs.stats;
}
