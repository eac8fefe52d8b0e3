// The ops of llama.cpp's own graph for a model file, with how often each runs:
// bench/llama_ops.py times them with test-backend-ops (--test-file) and writes
// where llama.cpp's time goes, beside ours. Built inside llama.cpp's tree by
// bench/llama_peer.sh (`build` copies it into tests/ as q35-graph-ops.cpp); it
// links llama.cpp and is never part of this project's build.
//
//   q35-graph-ops -m FILE -c CTX -ub ROWS -fa on -o OUT.txt
//
// It reserves two graphs on the CPU (no weights read): a prompt chunk of
// min(CTX, ROWS) rows with one output row (llama-bench's prompt test), and one
// decode step (one row, one output). Each line of OUT is
//
//   GRAPH COUNT OP TYPE NE0..NE3 N_PARAMS PARAMS... N_SRC (TYPE NE0..3 NB0..3)... NAME
//
// GRAPH is pp or tg; COUNT how many nodes of that graph have the same op,
// type, shape, parameters and sources' layouts (so they time the same); the
// rest, from OP on, is a line of test-backend-ops' --test-file format, NAME the
// first such node's name. View-like nodes (no kernel) are left out.
#include "arg.h"
#include "common.h"
#include "ggml.h"
#include "llama.h"
#include "../src/llama-ext.h"

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct op_row {
    std::string line; // from OP to the sources, without the name
    std::string name;
    int count = 0;
};

bool viewlike(ggml_op op)
{
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

std::string key_of(const ggml_tensor *t)
{
    std::ostringstream s;
    s << (int)t->op << ' ' << (int)t->type << ' ';
    for (int i = 0; i < 4; i++)
        s << t->ne[i] << ' ';
    const int n_params = GGML_MAX_OP_PARAMS / sizeof(int32_t);
    s << n_params << ' ';
    for (int i = 0; i < n_params; i++)
        s << ((const int32_t *)t->op_params)[i] << ' ';
    int n_src = 0;
    while (n_src < GGML_MAX_SRC && t->src[n_src])
        n_src++;
    s << n_src << ' ';
    for (int j = 0; j < n_src; j++) {
        const ggml_tensor *x = t->src[j];
        s << (int)x->type << ' ';
        for (int i = 0; i < 4; i++)
            s << x->ne[i] << ' ';
        for (int i = 0; i < 4; i++)
            s << x->nb[i] << ' ';
    }
    return s.str();
}

// The graph's kernel nodes grouped by key, in the order each key first runs.
std::vector<op_row> rows_of(ggml_cgraph *g)
{
    std::vector<op_row> rows;
    std::map<std::string, size_t> at;
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        const ggml_tensor *t = ggml_graph_node(g, i);
        if (viewlike(t->op))
            continue;
        const std::string k = key_of(t);
        auto it = at.find(k);
        if (it == at.end()) {
            at.emplace(k, rows.size());
            std::string name = t->name[0] ? t->name : "-";
            for (char &c : name) // one field: test-backend-ops reads the name as one word
                if (c == ' ')
                    c = '_';
            rows.push_back({k, name, 1});
        } else {
            rows[it->second].count++;
        }
    }
    return rows;
}

} // namespace

int main(int argc, char **argv)
{
    common_params params;
    params.out_file = "graph-ops.txt";
    common_init();
    if (!common_params_parse(argc, argv, params, LLAMA_EXAMPLE_EXPORT_GRAPH_OPS))
        return 1;
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    params.devices = {cpu, nullptr};
    params.fit_params = false;
    params.n_gpu_layers = 0;
    params.warmup = false;
    common_init_result_ptr init = common_init_from_params(params);
    llama_context *ctx = init ? init->context() : nullptr;
    if (!ctx) {
        fprintf(stderr, "q35-graph-ops: could not load %s\n", params.model.path.c_str());
        return 1;
    }
    FILE *out = fopen(params.out_file.c_str(), "w");
    if (!out) {
        fprintf(stderr, "q35-graph-ops: cannot write %s\n", params.out_file.c_str());
        return 1;
    }
    const uint32_t rows = std::min(llama_n_ctx(ctx), llama_n_ubatch(ctx));
    const struct {
        const char *label;
        uint32_t n_tokens;
    } graphs[] = {{"pp", rows}, {"tg", 1}};
    for (const auto &gr : graphs) {
        ggml_cgraph *g = llama_graph_reserve(ctx, gr.n_tokens, 1, 1);
        if (!g) {
            fprintf(stderr, "q35-graph-ops: could not reserve the %s graph of %u rows\n", gr.label, gr.n_tokens);
            fclose(out);
            return 1;
        }
        int nodes = 0;
        for (const op_row &r : rows_of(g)) {
            fprintf(out, "%s %d %s%s\n", gr.label, r.count, r.line.c_str(), r.name.c_str());
            nodes += r.count;
        }
        fprintf(stderr, "q35-graph-ops: %s: %u rows, %d kernel nodes\n", gr.label, gr.n_tokens, nodes);
    }
    if (fclose(out) != 0) {
        fprintf(stderr, "q35-graph-ops: writing %s failed\n", params.out_file.c_str());
        return 1;
    }
    return 0;
}
