// The Boost Graph Library references for ssspd-bench: Dijkstra and
// Bellman-Ford from BGL on a compressed_sparse_row_graph built from our CSR.
//
// Boost's Δ-stepping lives in the Parallel BGL (boost/graph/distributed/),
// which needs MPI; it is not built here (see docs/bench/README.md).
#include "boost_ref.h"

#include <boost/graph/bellman_ford_shortest_paths.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>

#include <cstdio>
#include <exception>
#include <limits>
#include <new>
#include <time.h>
#include <utility>
#include <vector>

namespace
{

struct arc {
        uint32_t w;
};

// 32-bit vertex and edge indices keep the graph as compact as ours (the
// road graphs and RMAT scale 24 fit); larger graphs are refused in
// ss__bref_new() with a message.
typedef boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, arc,
                                           boost::no_property, uint32_t, uint32_t>
    csr_graph;

uint64_t now_ns()
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Thrown by the visitor below when a Bellman-Ford run passes its deadline:
// Boost's loop has no other way out.
struct deadline_passed {
};

// Checks the clock every 2^20 examined edges, which costs nothing measurable
// next to the relaxation itself and still stops within a few milliseconds.
struct deadline_visitor : public boost::bellman_visitor<> {
        uint64_t deadline;
        uint64_t *examined;

        deadline_visitor(uint64_t d, uint64_t *counter) : deadline(d), examined(counter)
        {
        }

        template <class Edge, class Graph> void examine_edge(Edge, Graph &)
        {
                if ((++*examined & 0xfffff) == 0 && now_ns() >= deadline)
                        throw deadline_passed();
        }
};

void set_why(char *why, size_t len, const char *msg)
{
        if (why && len)
                std::snprintf(why, len, "%s", msg);
}

} // namespace

struct ss__bref {
        csr_graph g;
        uint32_t n;
        std::vector<uint64_t> dist;
        std::vector<uint32_t> pred;

        // Property maps over the reused arrays, indexed by vertex number.
        auto dist_map()
        {
                return boost::make_iterator_property_map(dist.begin(),
                                                         boost::get(boost::vertex_index, g));
        }
        auto pred_map()
        {
                return boost::make_iterator_property_map(pred.begin(),
                                                         boost::get(boost::vertex_index, g));
        }
};

extern "C" struct ss__bref *ss__bref_new(uint32_t n, uint64_t m, const uint64_t *row,
                                         const uint32_t *col, const uint32_t *w, char *why,
                                         size_t why_len)
{
        if (m >= std::numeric_limits<uint32_t>::max()) {
                set_why(why, why_len,
                        "graph has 2^32 or more arcs, beyond the Boost "
                        "reference's 32-bit edge index");
                return nullptr;
        }
        try {
                // Our CSR is sorted by tail, which is the order this
                // constructor wants; it copies the edges into its own CSR.
                std::vector<std::pair<uint32_t, uint32_t>> edges;
                std::vector<arc> props;
                edges.reserve(m);
                props.reserve(m);
                for (uint32_t u = 0; u < n; u++)
                        for (uint64_t e = row[u]; e < row[u + 1]; e++) {
                                edges.emplace_back(u, col[e]);
                                props.push_back(arc{w[e]});
                        }
                ss__bref *b = new ss__bref{csr_graph(boost::edges_are_sorted, edges.begin(),
                                                     edges.end(), props.begin(), n, (uint32_t)m),
                                           n, std::vector<uint64_t>(n), std::vector<uint32_t>(n)};
                return b;
        } catch (const std::bad_alloc &) {
                set_why(why, why_len, "out of memory building the Boost graph");
        } catch (const std::exception &e) {
                set_why(why, why_len, e.what());
        }
        return nullptr;
}

extern "C" void ss__bref_free(struct ss__bref *b)
{
        delete b;
}

extern "C" int ss__bref_dijkstra(struct ss__bref *b, uint32_t source, char *why, size_t why_len)
{
        if (source >= b->n) {
                set_why(why, why_len, "source out of range");
                return -1;
        }
        try {
                // Predecessors are recorded because our Dijkstra records them
                // too: both do the work a route query needs.
                boost::dijkstra_shortest_paths(b->g, source,
                                               boost::predecessor_map(b->pred_map())
                                                   .distance_map(b->dist_map())
                                                   .weight_map(boost::get(&arc::w, b->g)));
        } catch (const std::exception &e) {
                set_why(why, why_len, e.what());
                return -1;
        }
        return 0;
}

extern "C" int ss__bref_bellman_ford(struct ss__bref *b, uint32_t source, uint64_t deadline_ns,
                                     char *why, size_t why_len)
{
        if (source >= b->n) {
                set_why(why, why_len, "source out of range");
                return -1;
        }
        // This overload leaves initialisation to the caller; it is part of
        // the query, like Boost's Dijkstra initialising its own maps.
        const uint64_t inf = std::numeric_limits<uint64_t>::max();
        for (uint32_t v = 0; v < b->n; v++) {
                b->dist[v] = inf;
                b->pred[v] = v;
        }
        b->dist[source] = 0;
        auto weight = boost::get(&arc::w, b->g);
        boost::closed_plus<uint64_t> combine(inf);
        std::less<uint64_t> compare;
        try {
                if (deadline_ns) {
                        uint64_t examined = 0;
                        boost::bellman_ford_shortest_paths(
                            b->g, b->n, weight, b->pred_map(), b->dist_map(), combine, compare,
                            deadline_visitor(deadline_ns, &examined));
                } else {
                        boost::bellman_ford_shortest_paths(b->g, b->n, weight, b->pred_map(),
                                                           b->dist_map(), combine, compare,
                                                           boost::default_bellman_visitor());
                }
        } catch (const deadline_passed &) {
                return 1;
        } catch (const std::exception &e) {
                set_why(why, why_len, e.what());
                return -1;
        }
        return 0;
}

extern "C" const uint64_t *ss__bref_dist(const struct ss__bref *b)
{
        return b->dist.data();
}

extern "C" uint64_t ss__bref_bytes(const struct ss__bref *b)
{
        // The CSR holds n + 1 row offsets (uint32), m targets (uint32) and m
        // weights; plus our two result arrays.
        uint64_t m = boost::num_edges(b->g);
        return (uint64_t)(b->n + 1) * 4 + m * 4 + m * sizeof(arc) +
               (uint64_t)b->n * (sizeof(uint64_t) + sizeof(uint32_t));
}
