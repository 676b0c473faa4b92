/* The partitioned GPU search: one graph split over the memory of one or
 * more devices, and one Δ-stepping search that runs on all of them at once
 * (kernels/part.cu says how).
 *
 * Why: a graph that does not fit one device fits several, each holding a
 * range of the vertices with their out-arcs, distances and queues (about
 * 44 bytes a node and 8 an arc, split between the devices, against about
 * 48 a node and 8 an arc for the graph and one stream of ss_gpu_open()).
 *
 * The vertices are cut into contiguous id ranges of about equal nodes +
 * arcs (ss_gpu_part_plan). Road graphs numbered by geography, as the DIMACS
 * files and ssspd-gen's are, then have few arcs between ranges; a graph
 * numbered at random would send most relaxations to another device.
 *
 * Several partitions may share one device (tests run the partitioned code
 * on one GPU that way). One search runs at a time on a handle; calls from
 * several threads wait for each other.
 */
#ifndef SS_GPU_PART_H
#define SS_GPU_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"
#include "gpu/gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Partitions of one search at most (as SS__PART_MAX in kernels/part.h). */
#define SS_GPU_PART_MAX 16

struct ss_gpu_part_config {
        const int *devices;    /* CUDA ids (NULL: device 0 alone) */
        unsigned ndev;         /* entries of devices, 1..SS_GPU_PART_MAX */
        unsigned parts;        /* partitions (0: one per device); a multiple of ndev */
        uint64_t memory_limit; /* bytes on each device (0: its free memory) */
        enum ss_gpu_delta_rule delta_rule;
        uint64_t delta;  /* Δ for SS_GPU_DELTA_FIXED */
        unsigned blocks; /* thread blocks per device (0: one per SM) */
};

void ss_gpu_part_config_default(struct ss_gpu_part_config *cfg);

/* Cuts g into `parts` ranges of consecutive ids with about equal
 * (nodes + arcs) each: bases[0] = 0, bases[parts] = n, bases strictly
 * increasing. Returns SS_OK, or SS_EINVAL when parts is 0, above
 * SS_GPU_PART_MAX or above n. Needs no GPU. */
int ss_gpu_part_plan(const struct ss_graph *g, unsigned parts, uint32_t *bases, struct ss_err *err);

struct ss_gpu_part;

/* Uploads g's partitions to the devices (partition p on device
 * devices[p * ndev / parts]), enables peer access between them, and
 * allocates each partition's search arrays. g must outlive the handle.
 * Returns SS_OK; SS_ENOGPU when there is no usable device, two devices
 * cannot reach each other's memory with atomics, or a device's share does
 * not fit its limit (the message names the device and the sizes);
 * SS_EINVAL for a bad config; SS_EGPU or SS_ENOMEM. */
int ss_gpu_part_open(const struct ss_graph *g, const struct ss_gpu_part_config *cfg,
                     struct ss_gpu_part **out, struct ss_err *err);
void ss_gpu_part_close(struct ss_gpu_part *h);

/* Answers q: one-to-all (q->all) and/or the distance to q->target, with
 * the path when q->want_path (walked back on the host over the graph's
 * in-arcs from a copy of every distance; path_needs_cpu when that walk
 * meets a zero-weight cycle). Target lists are not taken (SS_EINVAL).
 * Distances for pageable q->all and for paths go through a pinned buffer
 * of 8n bytes that the handle keeps from its first such query, so that the
 * deadline is watched while the devices work. Returns as ss_gpu_run():
 * SS_OK, SS_EINVAL, SS_ETIMEDOUT, SS_EGPU (a device failed or the search
 * had to be aborted; the handle is unusable afterwards: SS_ENOGPU from then
 * on), SS_ENOMEM. */
int ss_gpu_part_run(struct ss_gpu_part *h, const struct ss_gpu_query *q, struct ss_gpu_result *r,
                    struct ss_err *err);

unsigned ss_gpu_part_count(const struct ss_gpu_part *h);
unsigned ss_gpu_part_devices(const struct ss_gpu_part *h);
/* Device memory the handle holds on its i-th device. */
uint64_t ss_gpu_part_mem_used(const struct ss_gpu_part *h, unsigned i);
/* Arcs whose head is in another partition than their tail. */
uint64_t ss_gpu_part_cut_arcs(const struct ss_gpu_part *h);
bool ss_gpu_part_healthy(const struct ss_gpu_part *h);
/* "4 partitions on 2 devices (0, 1), 2.1% of arcs cut, 812 + 790 MiB, delta 3200" */
void ss_gpu_part_describe(const struct ss_gpu_part *h, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
