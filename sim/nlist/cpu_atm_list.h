/* SPDX-License-Identifier: MIT
 * nbsim — private to the CPU reference: the ATM cut-off's neighbour lists in double
 * (atm_list.h: what they hold, why the triples swept from them are the tile sweep's), half lists
 * in nlist.h's slot-major layout, built by a cell grid (cells of edge >= R + s: O(N k) tests for
 * k neighbours), and the triple sweep over them. The lists always come out complete: the build
 * grows them to the most neighbours a body has. Periodic axes (per): distances are minimum
 * images, the grid wraps, a body wrapped across a face has not moved. */
#ifndef SIM_CPU_ATM_LIST_H
#define SIM_CPU_ATM_LIST_H

#include "nlist/atm_list.h"
#include "physics/physics.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t n, stride, cap; /* bodies, entries between neighbour k and k + 1, entries per body */
    uint32_t *nbr;           /* slot-major: nbr[k * stride + i], bodies j < i */
    uint32_t *count;         /* per body: neighbours at the last build (never > cap) */
    sim_vec4d *ref;          /* positions at the last build */
    double cutoff, skin;     /* of the last build [m] */
    int built;
    uint32_t most;    /* the most neighbours of one body at the last build */
    uint64_t entries; /* sum of count */
    /* The box's periods (NULL: walls on every axis), the owner's, set after init: builds,
     * sweeps and the displacement check take minimum images through them. */
    const sim_period_d *per;
    /* the cell grid's scratch: bodies by cell (counting sort) */
    uint32_t *cell_start, *cell_body, *body_cell;
    size_t cells_cap;
} sim_cpu_atm_list;

/* Lists for n bodies (nothing built); SIM_OUT_OF_MEMORY names them. */
sim_status sim_cpu_atm_list_init(sim_cpu_atm_list *l, uint32_t n, sim_error *err);
void sim_cpu_atm_list_free(sim_cpu_atm_list *l);

/* Builds the half lists at pos for the cut-off R > 0 and skin s >= 0 [m]: body i's list holds
 * every j < i with sim_atm_list_near_d(pos[i], pos[j], sim_atm_list_reach2_d(R, s)); ref = pos.
 * Grows the lists as needed (SIM_OUT_OF_MEMORY: nothing built). */
sim_status sim_cpu_atm_list_build(sim_cpu_atm_list *l, const sim_vec4d *pos, double cutoff,
                                  double skin, sim_error *err);

/* Whether the lists must be rebuilt for pos, R and s: never built, another cut-off or skin, or
 * a body moved more than s/2 since the build (nlist.h's test; NaN counts as moved). */
int sim_cpu_atm_list_stale(const sim_cpu_atm_list *l, const sim_vec4d *pos, double cutoff,
                           double skin);

/* The ATM forces of the triples whose largest body (in index) is in [begin, end), from the lists
 * (each triple once, as (i, max(j, k), min(j, k)): atm_list.h), through sim_atm_forces_d: added
 * into f (all three bodies), the energy added into *energy (may be NULL). ph's cut-off must be
 * the lists' (> 0). Returns the triples within the cut-off (sim_atm_list_inside_d). */
uint64_t sim_cpu_atm_list_sweep(const sim_cpu_atm_list *l, uint32_t begin, uint32_t end,
                                const sim_vec4d *pos, const sim_physics *ph, sim_vec3d *f,
                                double *energy);

/* Bytes the lists hold: entries, counts and the positions of the build. */
uint64_t sim_cpu_atm_list_bytes(const sim_cpu_atm_list *l);

#ifdef __cplusplus
}
#endif

#endif /* SIM_CPU_ATM_LIST_H */
