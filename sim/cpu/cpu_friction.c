/* SPDX-License-Identifier: MIT
 * nbsim — friction in the CPU reference (cpu_friction.h): the history tables, the pair visit,
 * the walls, torques and the spin's half kicks, in double with OpenMP. */
#include "cpu/cpu_friction.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/omp.h"

/* Below this many bodies the kicks run on one thread (as cpu_backend.c's phases). */
#define FRICTION_MIN_PARALLEL 32768

static sim_vec3d spin3(sim_vec4d w) {
    const sim_vec3d v = {w.x, w.y, w.z};
    return v;
}

static const sim_contact_history_d no_history = {{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}};

/* The slot of body i (the owner) with partner in the last step's table, NULL when there is
 * none: by the partner's index, whatever slot it sits in. */
static inline const sim_cpu_slot *find_slot(const sim_cpu_friction *fr, uint32_t i,
                                            uint32_t partner) {
    const sim_cpu_slot *s = fr->table[fr->last] + fr->row[i];
    const uint32_t used = fr->count[fr->last][i];
    for (uint32_t k = 0; k < used; ++k) {
        if (s[k].partner == partner) {
            return &s[k];
        }
    }
    return NULL;
}

/* That slot's history, zero when there is none. */
static inline sim_contact_history_d find(const sim_cpu_friction *fr, uint32_t i, uint32_t partner) {
    const sim_cpu_slot *s = find_slot(fr, i, partner);
    return s != NULL ? s->h : no_history;
}

/* Writes body i's history with partner into the table `to`: a slot claimed with one atomic
 * increment of the row's counter while a team of threads sweeps the pairs (they write rows
 * concurrently; the slot order does not matter, lookups go by partner), a plain one on one
 * thread and for the walls (a body's walls are one thread's). A row that is full keeps
 * counting: the lowest such body is remembered for sim_cpu_friction_check. */
static inline void store(sim_cpu_friction *fr, int to, uint32_t i, uint32_t partner,
                         const sim_contact_history_d *h) {
    uint32_t k;
    uint32_t *counter = &fr->count[to][i];
    if (fr->team > 1) {
        SIM_OMP(omp atomic capture)
        k = (*counter)++;
    } else {
        k = (*counter)++;
    }
    if (fr->row[i] + k < fr->row[i + 1]) {
        sim_cpu_slot *s = &fr->table[to][fr->row[i] + k];
        s->partner = partner;
        s->unused = 0;
        s->h = *h;
        return;
    }
    SIM_OMP(omp critical(cpu_friction_overflow)) {
        if (i < fr->overflow) {
            fr->overflow = i;
        }
    }
}

sim_status sim_cpu_friction_init(sim_cpu_friction *fr, const sim_state *st, sim_vec4d *spin,
                                 int threads, sim_error *err) {
    memset(fr, 0, sizeof *fr);
    const uint32_t n = st->n;
    fr->n = n;
    fr->threads = threads > 0 ? threads : 1;
    fr->spin = spin;
    fr->overflow = UINT32_MAX;
    fr->in_table = 1;
    double r_min = INFINITY;
    for (uint32_t i = 0; i < n; ++i) {
        r_min = st->pos[i].w < r_min ? st->pos[i].w : r_min;
    }
    fr->row = malloc(((size_t)n + 1) * sizeof *fr->row);
    if (fr->row != NULL) {
        fr->row[0] = 0;
        for (uint32_t i = 0; i < n; ++i) {
            fr->row[i + 1] = fr->row[i] + sim_friction_slots(st->pos[i].w, r_min, n);
        }
    }
    const uint64_t slots = fr->row != NULL ? fr->row[n] : 0;
    for (int t = 0; t < 2 && fr->row != NULL; ++t) {
        fr->table[t] = slots <= SIZE_MAX / sizeof(sim_cpu_slot)
                           ? malloc((size_t)(slots ? slots : 1) * sizeof(sim_cpu_slot))
                           : NULL;
        fr->count[t] = calloc(n ? n : 1, sizeof *fr->count[t]);
    }
    fr->torque = calloc(n ? n : 1, sizeof *fr->torque);
    fr->tbuf = calloc((size_t)fr->threads * (n ? n : 1), sizeof *fr->tbuf);
    fr->npair = calloc(n ? n : 1, sizeof *fr->npair);
    if (fr->row == NULL || fr->table[0] == NULL || fr->table[1] == NULL || fr->count[0] == NULL ||
        fr->count[1] == NULL || fr->torque == NULL || fr->tbuf == NULL || fr->npair == NULL) {
        sim_cpu_friction_free(fr);
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "friction: cannot allocate the contact histories of %u bodies (%llu "
                        "slots of %zu bytes, twice)",
                        n, (unsigned long long)slots, sizeof(sim_cpu_slot));
    }
    /* The state's histories become the last step's. */
    for (uint64_t k = 0; k < st->contact_count; ++k) {
        const sim_state_contact *c = &st->contacts[k];
        const sim_contact_history_d h = {c->xi, c->roll};
        const sim_cpu_slot *row = fr->table[fr->last] + fr->row[c->i];
        for (uint32_t s = 0; s < fr->count[fr->last][c->i]; ++s) {
            if (row[s].partner == c->j) {
                sim_cpu_friction_free(fr);
                return sim_fail(err, SIM_BAD_ARGUMENT, "contact of body %u with %s %u given twice",
                                c->i, SIM_CONTACT_IS_WALL(c->j) ? "wall" : "body",
                                SIM_CONTACT_IS_WALL(c->j) ? (uint32_t)SIM_CONTACT_WALL_INDEX(c->j)
                                                          : c->j);
            }
        }
        store(fr, fr->last, c->i, c->j, &h);
    }
    return sim_cpu_friction_check(fr, err);
}

sim_status sim_cpu_friction_ready(sim_cpu_friction **fric, const sim_params *p,
                                  const sim_state *from, sim_state *st, int threads,
                                  sim_error *err) {
    const int on = p != NULL && sim_params_have_friction(p);
    if (on && *fric != NULL && from == NULL) {
        return SIM_OK;
    }
    sim_cpu_friction *fr = on ? malloc(sizeof *fr) : NULL;
    if (on && fr == NULL) {
        return sim_fail(err, SIM_OUT_OF_MEMORY, "friction: cannot allocate its tables");
    }
    sim_state view = from != NULL ? *from : *st;
    view.contact_count = from != NULL ? from->contact_count : 0;
    const sim_status status =
        on ? sim_cpu_friction_init(fr, &view, st->spin, threads, err) : SIM_OK;
    if (status != SIM_OK) {
        free(fr);
        return status;
    }
    sim_cpu_friction_destroy(fric);
    *fric = fr;
    return SIM_OK;
}

void sim_cpu_friction_destroy(sim_cpu_friction **fric) {
    if (*fric != NULL) {
        sim_cpu_friction_free(*fric);
        free(*fric);
        *fric = NULL;
    }
}

void sim_cpu_friction_free(sim_cpu_friction *fr) {
    free(fr->row);
    for (int t = 0; t < 2; ++t) {
        free(fr->table[t]);
        free(fr->count[t]);
    }
    free(fr->spring[0]);
    free(fr->spring[1]);
    free(fr->first);
    free(fr->old_first);
    free(fr->npair);
    free(fr->torque);
    free(fr->tbuf);
    free(fr->save_spin);
    free(fr->save_torque);
    memset(fr, 0, sizeof *fr);
}

void sim_cpu_friction_begin(sim_cpu_friction *fr, int team, double dt) {
    memset(fr->count[1 - fr->last], 0, (size_t)fr->n * sizeof *fr->count[0]);
    memset(fr->tbuf, 0, (size_t)team * fr->n * sizeof *fr->tbuf);
    fr->team = team;
    fr->dt = dt;
    fr->overflow = UINT32_MAX;
    fr->out_springs = 0;
}

/* The contact kernels' test (cpu_backend_impl.h), which sim_friction_contact repeats: the
 * separation through the minimum image on ph's periodic axes (a pair across a face touches). */
static inline int touches(const sim_physics *ph, sim_vec4d pa, sim_vec4d pb) {
    double dx = pa.x - pb.x, dy = pa.y - pb.y, dz = pa.z - pb.z;
    sim_min_image_d(&dx, &dy, &dz, ph);
    const double reach = pa.w + pb.w;
    return dx * dx + dy * dy + dz * dz < reach * reach;
}

/* The law of a pair that touches (touches()) with history *h, advanced here, and this
 * thread's torque buffer tq (user order); 0 when the law finds no contact (nothing added).
 * Body i, the one with the larger user index, owns the history and is "i" of
 * sim_friction_contact: the same arguments in the same roles whichever enumeration found the
 * pair, so the same bits. */
static inline int law(sim_cpu_friction *fr, const sim_physics *ph, uint32_t ua, uint32_t ub,
                      sim_vec4d pa, sim_vec4d va, sim_vec4d pb, sim_vec4d vb, sim_vec3d *fa,
                      sim_vec3d *fb, sim_vec3d *tq, sim_contact_history_d *h, double *energy) {
    const int a_owns = ua > ub;
    const uint32_t i = a_owns ? ua : ub, j = a_owns ? ub : ua;
    sim_vec3d f, ti, tj;
    if (!sim_friction_contact_d(a_owns ? pa : pb, a_owns ? va : vb, spin3(fr->spin[i]),
                                a_owns ? pb : pa, a_owns ? vb : va, spin3(fr->spin[j]), h, ph,
                                fr->dt, &f, &ti, &tj, energy)) {
        return 0;
    }
    sim_vec3d *fi = a_owns ? fa : fb, *fj = a_owns ? fb : fa;
    fi->x += f.x;
    fi->y += f.y;
    fi->z += f.z;
    fj->x -= f.x;
    fj->y -= f.y;
    fj->z -= f.z;
    tq[i].x += ti.x;
    tq[i].y += ti.y;
    tq[i].z += ti.z;
    tq[j].x += tj.x;
    tq[j].y += tj.y;
    tq[j].z += tj.z;
    return 1;
}

/* The visit of a pair that touches, its history in the tables. */
static inline void visit_touching(sim_cpu_friction *fr, const sim_physics *ph, uint32_t ua,
                                  uint32_t ub, sim_vec4d pa, sim_vec4d va, sim_vec4d pb,
                                  sim_vec4d vb, sim_vec3d *fa, sim_vec3d *fb, sim_vec3d *tq,
                                  double *energy) {
    const uint32_t i = ua > ub ? ua : ub, j = ua > ub ? ub : ua;
    sim_contact_history_d h = find(fr, i, j);
    if (law(fr, ph, ua, ub, pa, va, pb, vb, fa, fb, tq, &h, energy)) {
        store(fr, 1 - fr->last, i, j, &h);
    }
}

/* Any pair: most end at the test. */
static void visit(sim_cpu_friction *fr, const sim_physics *ph, uint32_t ua, uint32_t ub,
                  sim_vec4d pa, sim_vec4d va, sim_vec4d pb, sim_vec4d vb, sim_vec3d *fa,
                  sim_vec3d *fb, sim_vec3d *tq, double *energy) {
    if (touches(ph, pa, pb)) {
        visit_touching(fr, ph, ua, ub, pa, va, pb, vb, fa, fb, tq, energy);
    }
}

void sim_cpu_friction_pair(sim_cpu_friction *fr, const sim_physics *ph, uint32_t ua, uint32_t ub,
                           sim_vec4d pa, sim_vec4d va, sim_vec4d pb, sim_vec4d vb, sim_vec3d *fa,
                           sim_vec3d *fb, double *energy) {
    visit(fr, ph, ua, ub, pa, va, pb, vb, fa, fb, fr->tbuf + (size_t)sim_cpu_thread_id() * fr->n,
          energy);
}

void sim_cpu_friction_tile(sim_cpu_friction *fr, const sim_physics *ph, uint32_t i0, uint32_t i1,
                           uint32_t j0, uint32_t j1, int diagonal, const sim_vec4d *pos,
                           const sim_vec4d *vel, const uint32_t *order, sim_vec3d *f,
                           double *energy, uint64_t *touching) {
    sim_vec3d *tq = fr->tbuf + (size_t)sim_cpu_thread_id() * fr->n;
    uint64_t touched = 0;
    for (uint32_t i = i0; i < i1; ++i) {
        const uint32_t j_end = diagonal ? i : j1;
        const uint32_t ui = order != NULL ? order[i] : i;
        const sim_vec4d pi = pos[i];
        for (uint32_t j = j0; j < j_end; ++j) {
            const sim_vec4d pj = pos[j];
            if (touches(ph, pi, pj)) {
                visit_touching(fr, ph, ui, order != NULL ? order[j] : j, pi, vel[i], pj, vel[j],
                               &f[i], &f[j], tq, energy);
                ++touched;
            }
        }
    }
    if (touching != NULL) {
        *touching += touched;
    }
}

/* Slots this far ahead of the sweep have their bodies' spin and torque fetched
 * (friction_prefetch). */
#define FRICTION_PREFETCH_SLOTS 8u

#if defined(__GNUC__)
#define FRICTION_PREFETCH(address, write) __builtin_prefetch((address), (write))
#else
#define FRICTION_PREFETCH(address, write) ((void)(address))
#endif

/* Asks the caches for what the visits of slot s's list will read and write that the springs'
 * stream does not bring: spin, torque and the owner's count are in user order while the sweep
 * runs in slot order, so for a large N each is a miss the visit would otherwise wait for.
 * Changes no value. */
static void friction_prefetch(const sim_cpu_friction *fr, const sim_cpu_nlist *l, uint32_t s,
                              const uint32_t *order, const sim_vec3d *tq) {
    const uint32_t c = l->count[s] < l->cap ? l->count[s] : l->cap;
    const uint32_t us = order[s];
    for (uint32_t k = 0; k < c; ++k) {
        const uint32_t uj = order[l->nbr[(size_t)k * l->stride + s]];
        FRICTION_PREFETCH(&fr->npair[us > uj ? us : uj], 1);
        FRICTION_PREFETCH(&fr->spin[uj], 0);
        FRICTION_PREFETCH(&tq[uj], 1);
    }
    FRICTION_PREFETCH(&fr->spin[us], 0);
    FRICTION_PREFETCH(&tq[us], 1);
}

void sim_cpu_friction_flush(sim_cpu_friction *fr) {
    if (fr->in_table) {
        return;
    }
    /* Rows that the check found full keep to their slots, as it leaves the tables. */
    const sim_cpu_spring *e = fr->spring[fr->last];
    uint32_t *count = fr->count[fr->last];
    for (uint64_t k = 0; k < fr->spring_used[fr->last]; ++k) {
        const uint32_t i = e[k].owner;
        if (i != CPU_SPRING_NONE && fr->row[i] + count[i] < fr->row[i + 1]) {
            sim_cpu_slot *s = &fr->table[fr->last][fr->row[i] + count[i]++];
            s->partner = e[k].partner;
            s->unused = 0;
            s->h = e[k].h;
        }
    }
    fr->in_table = 1;
}

void sim_cpu_friction_relist(sim_cpu_friction *fr) {
    if (fr != NULL) {
        sim_cpu_friction_flush(fr);
        fr->in_springs = 0;
        fr->carry = 0;
    }
}

void sim_cpu_friction_rebuilt(sim_cpu_friction *fr) {
    if (fr != NULL && fr->in_springs) {
        fr->in_springs = 0;
        fr->carry = 1;
    }
}

/* The spring of (owner, partner) among old entries [a, b), NULL when none. */
static const sim_cpu_spring *old_spring(const sim_cpu_spring *old, uint64_t a, uint64_t b,
                                        uint32_t owner, uint32_t partner) {
    for (uint64_t q = a; q < b; ++q) {
        if (old[q].owner == owner && old[q].partner == partner) {
            return &old[q];
        }
    }
    return NULL;
}

/* The carry of sim_cpu_friction_rebuilt: the new layout in spring[1 - last], which then
 * becomes spring[last]. A pair in contact at the last step was in the old lists at one of its
 * two slots (at both for full lists, its spring at the larger), so both are searched; every
 * entry is, touching now or not, so that spring[last] keeps each of its pairs the new lists
 * hold. 0 when the springs have no room for the new lists (then the table's way). */
static int carry_over(sim_cpu_friction *fr, const sim_cpu_nlist *l, const uint32_t *order) {
    if (fr->old_first == NULL) {
        fr->old_first = malloc(((size_t)fr->n + 1u) * sizeof *fr->old_first);
    }
    if (fr->old_first == NULL || fr->first == NULL || l->entries > fr->spring_cap) {
        return 0;
    }
    uint64_t *was = fr->first;
    fr->first = fr->old_first;
    fr->old_first = was;
    const sim_cpu_spring *old = fr->spring[fr->last];
    sim_cpu_spring *e = fr->spring[1 - fr->last];
    uint64_t at = 0;
    for (uint32_t i = 0; i < l->n; ++i) {
        fr->first[i] = at;
        const uint32_t c = l->count[i] < l->cap ? l->count[i] : l->cap;
        for (uint32_t k = 0; k < c; ++k, ++at) {
            const uint32_t j = l->nbr[(size_t)k * l->stride + i];
            e[at].owner = CPU_SPRING_NONE;
            if (l->half || i > j) {
                const uint32_t ui = order[i], uj = order[j];
                const uint32_t owner = ui > uj ? ui : uj, partner = ui > uj ? uj : ui;
                const sim_cpu_spring *s = old_spring(old, was[i], was[i + 1], owner, partner);
                s = s != NULL ? s : old_spring(old, was[j], was[j + 1], owner, partner);
                if (s != NULL) {
                    e[at] = *s;
                }
            }
        }
    }
    fr->first[l->n] = at;
    fr->spring[1 - fr->last] = fr->spring[fr->last];
    fr->spring[fr->last] = e;
    fr->spring_used[0] = fr->spring_used[1] = at;
    return 1;
}

/* Room for `entries` springs in both arrays (their contents go: the caller lays them out). */
static sim_status spring_room(sim_cpu_friction *fr, uint64_t entries, sim_error *err) {
    if (fr->first == NULL) {
        fr->first = malloc(((size_t)fr->n + 1u) * sizeof *fr->first);
    }
    if (entries > fr->spring_cap && fr->first != NULL) {
        const uint64_t cap = entries + entries / 4u + 64u;
        for (int t = 0; t < 2; ++t) {
            free(fr->spring[t]);
            fr->spring[t] = cap <= SIZE_MAX / sizeof(sim_cpu_spring)
                                ? malloc((size_t)cap * sizeof(sim_cpu_spring))
                                : NULL;
        }
        fr->spring_cap = fr->spring[0] != NULL && fr->spring[1] != NULL ? cap : 0;
    }
    if (fr->first == NULL || entries > fr->spring_cap) {
        return sim_fail(err, SIM_OUT_OF_MEMORY,
                        "friction: cannot allocate the springs of %llu neighbour-list entries",
                        (unsigned long long)entries);
    }
    return SIM_OK;
}

sim_status sim_cpu_friction_lay(sim_cpu_friction *fr, const sim_physics *ph, const sim_cpu_nlist *l,
                                const sim_vec4d *pos, const uint32_t *order, sim_error *err) {
    memset(fr->npair, 0, (size_t)fr->n * sizeof *fr->npair);
    fr->out_springs = 1;
    if (fr->in_springs) {
        fr->spring_used[1 - fr->last] = fr->spring_used[fr->last];
        return SIM_OK;
    }
    if (fr->carry && carry_over(fr, l, order)) {
        fr->carry = 0;
        fr->in_springs = 1;
        return SIM_OK;
    }
    sim_cpu_friction_flush(fr); /* the table then has them: room is free to drop the springs */
    fr->in_springs = 0;
    fr->carry = 0;
    const sim_status status = spring_room(fr, l->entries, err);
    if (status != SIM_OK) {
        fr->out_springs = 0;
        return status;
    }
    /* Only a pair that touches now is read by the sweep: the others need no lookup. */
    sim_cpu_spring *e = fr->spring[fr->last];
    uint64_t at = 0;
    for (uint32_t i = 0; i < l->n; ++i) {
        fr->first[i] = at;
        const uint32_t c = l->count[i] < l->cap ? l->count[i] : l->cap;
        for (uint32_t k = 0; k < c; ++k, ++at) {
            const uint32_t j = l->nbr[(size_t)k * l->stride + i];
            e[at].owner = CPU_SPRING_NONE;
            if ((l->half || i > j) && touches(ph, pos[i], pos[j])) {
                const uint32_t ui = order[i], uj = order[j];
                const uint32_t owner = ui > uj ? ui : uj, partner = ui > uj ? uj : ui;
                const sim_cpu_slot *s = find_slot(fr, owner, partner);
                if (s != NULL) {
                    e[at].owner = owner;
                    e[at].partner = partner;
                    e[at].h = s->h;
                }
            }
        }
    }
    fr->first[l->n] = at;
    fr->spring_used[0] = fr->spring_used[1] = at;
    fr->in_springs = 1;
    return SIM_OK;
}

double sim_cpu_friction_nlist(sim_cpu_friction *fr, const sim_physics *ph, const sim_cpu_nlist *l,
                              uint32_t begin, uint32_t end, const sim_vec4d *pos,
                              const sim_vec4d *vel, const uint32_t *order, sim_vec3d *f,
                              sim_cpu_nlist_tally *tally) {
    sim_vec3d *tq = fr->tbuf + (size_t)sim_cpu_thread_id() * fr->n;
    const sim_cpu_spring *in = fr->spring[fr->last];
    sim_cpu_spring *out = fr->spring[1 - fr->last];
    double energy = 0.0;
    for (uint32_t i = begin; i < end; ++i) {
        if (i + FRICTION_PREFETCH_SLOTS < end) {
            friction_prefetch(fr, l, i + FRICTION_PREFETCH_SLOTS, order, tq);
        }
        const uint32_t c = l->count[i] < l->cap ? l->count[i] : l->cap;
        const uint64_t e0 = fr->first[i];
        const sim_vec4d pi = pos[i];
        const uint32_t ui = order[i];
        tally->tests += c;
        for (uint32_t k = 0; k < c; ++k) {
            const uint32_t j = l->nbr[(size_t)k * l->stride + i];
            const sim_vec4d pj = pos[j];
            out[e0 + k].owner = CPU_SPRING_NONE;
            /* full lists hold the pair at both ends: visited once, from the larger slot */
            if (!((l->half || i > j) && touches(ph, pi, pj))) {
                continue;
            }
            tally->contacts++;
            const uint32_t uj = order[j];
            const uint32_t owner = ui > uj ? ui : uj;
            sim_contact_history_d h =
                in[e0 + k].owner != CPU_SPRING_NONE ? in[e0 + k].h : no_history;
            if (!law(fr, ph, ui, uj, pi, vel[i], pj, vel[j], &f[i], &f[j], tq, &h, &energy)) {
                continue;
            }
            out[e0 + k].owner = owner;
            out[e0 + k].partner = ui > uj ? uj : ui;
            out[e0 + k].h = h;
            if (fr->team > 1) { /* the owners' rows are checked after the walls */
                SIM_OMP(omp atomic update)
                fr->npair[owner]++;
            } else {
                fr->npair[owner]++;
            }
        }
    }
    return energy;
}

void sim_cpu_friction_end(sim_cpu_friction *fr, int team) {
    const int64_t n = fr->n;
    const int threads = n >= FRICTION_MIN_PARALLEL ? fr->threads : 1;
    (void)threads; /* unused without OpenMP */
    SIM_OMP(omp parallel for num_threads(threads) schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        sim_vec3d s = {0.0, 0.0, 0.0};
        for (int t = 0; t < team; ++t) {
            const sim_vec3d v = fr->tbuf[(size_t)t * (size_t)n + (size_t)i];
            s.x += v.x;
            s.y += v.y;
            s.z += v.z;
        }
        fr->torque[i] = s;
    }
}

sim_vec3d sim_cpu_friction_body(sim_cpu_friction *fr, const sim_physics *ph, uint32_t i,
                                sim_vec4d pos, sim_vec4d vel, double *energy) {
    sim_vec3d total = {0.0, 0.0, 0.0};
    sim_vec3d *force = &total;
    const sim_vec3d w = spin3(fr->spin[i]);
    const double x[3] = {pos.x, pos.y, pos.z};
    /* A body a thousandth of the box from every wall overlaps none, whatever the rounding: most
     * bodies skip the six tests below. */
    const double inner = 0.999 * ph->box.box_half - pos.w;
    const int walls = !(fabs(pos.x) < inner && fabs(pos.y) < inner && fabs(pos.z) < inner);
    for (int k = 0; k < 6 * walls; ++k) {
        /* sim_friction_wall's overlap: no lookup for the walls a body is far from, nor for the
         * faces of a periodic axis (no walls there) */
        if ((ph->box.periodic >> (k >> 1)) & 1) {
            continue;
        }
        const double overlap =
            (k & 1) ? x[k >> 1] + pos.w - ph->box.box_half : pos.w - ph->box.box_half - x[k >> 1];
        if (!(overlap > 0.0)) {
            continue;
        }
        const uint32_t code = SIM_CONTACT_WALL(k);
        sim_contact_history_d h = find(fr, i, code);
        if (sim_friction_wall_d(pos, vel, w, k, &h, ph, fr->dt, force, &fr->torque[i], energy)) {
            store(fr, 1 - fr->last, i, code, &h);
        }
    }
    const double m = vel.w; /* gravity, as sim_body_force */
    force->x += m * ph->box.gravity.x;
    force->y += m * ph->box.gravity.y;
    force->z += m * ph->box.gravity.z;
    if (energy != NULL) {
        *energy -=
            m * (ph->box.gravity.x * pos.x + ph->box.gravity.y * pos.y + ph->box.gravity.z * pos.z);
    }
    return total;
}

void sim_cpu_friction_kick(sim_cpu_friction *fr, const sim_vec4d *pos, const sim_vec4d *vel,
                           double dt, int team) {
    const int64_t n = fr->n;
    (void)team; /* unused without OpenMP */
    SIM_OMP(omp parallel for num_threads(team) schedule(static))
    for (int64_t i = 0; i < n; ++i) {
        sim_vec3d w = spin3(fr->spin[i]);
        sim_verlet_spin_d(&w, fr->torque[i], pos[i], vel[i].w, dt);
        fr->spin[i].x = w.x;
        fr->spin[i].y = w.y;
        fr->spin[i].z = w.z;
    }
}

sim_status sim_cpu_friction_check(sim_cpu_friction *fr, sim_error *err) {
    const uint32_t *walls = fr->count[1 - fr->last];
    for (uint32_t b = 0; fr->out_springs && b < fr->n && b < fr->overflow; ++b) { /* pairs */
        if (fr->npair[b] + walls[b] > fr->row[b + 1] - fr->row[b]) {
            fr->overflow = b;
        }
    }
    if (fr->overflow == UINT32_MAX) {
        return SIM_OK;
    }
    const uint32_t i = fr->overflow;
    uint32_t had = fr->out_springs ? fr->npair[i] + walls[i] : 0;
    for (int t = 0; t < 2; ++t) { /* the table that overflowed: kept to its slots */
        for (uint32_t b = 0; b < fr->n; ++b) {
            const uint32_t cap = (uint32_t)(fr->row[b + 1] - fr->row[b]);
            had = b == i && fr->count[t][b] > had ? fr->count[t][b] : had;
            fr->count[t][b] = fr->count[t][b] < cap ? fr->count[t][b] : cap;
        }
    }
    fr->overflow = UINT32_MAX;
    return sim_fail(err, SIM_UNSTABLE,
                    "friction: body %u touches %u bodies and walls at once, more than the %llu "
                    "whose histories it has room for (its neighbours overlap each other by more "
                    "than %.0f %% of the smallest radius: a stiffer contact or a smaller step)",
                    i, had, (unsigned long long)(fr->row[i + 1] - fr->row[i]),
                    100.0 * CPU_FRICTION_OVERLAP);
}

void sim_cpu_friction_commit(sim_cpu_friction *fr) {
    fr->last = 1 - fr->last;
    fr->in_springs = fr->out_springs;
    fr->in_table = !fr->out_springs;
    fr->out_springs = 0;
}

void sim_cpu_friction_save(sim_cpu_friction *fr, int *saved) {
    const size_t n = fr->n ? fr->n : 1;
    if (fr->save_spin == NULL) {
        fr->save_spin = malloc(n * sizeof *fr->save_spin);
    }
    if (fr->save_torque == NULL) {
        fr->save_torque = malloc(n * sizeof *fr->save_torque);
    }
    *saved = fr->save_spin != NULL && fr->save_torque != NULL;
    if (*saved) {
        memcpy(fr->save_spin, fr->spin, (size_t)fr->n * sizeof *fr->spin);
        memcpy(fr->save_torque, fr->torque, (size_t)fr->n * sizeof *fr->torque);
    }
}

void sim_cpu_friction_restore(sim_cpu_friction *fr) {
    memcpy(fr->spin, fr->save_spin, (size_t)fr->n * sizeof *fr->spin);
    memcpy(fr->torque, fr->save_torque, (size_t)fr->n * sizeof *fr->torque);
    fr->overflow = UINT32_MAX;
}

sim_status sim_cpu_friction_read(sim_cpu_friction *fr, sim_state *out, sim_error *err) {
    if (fr != NULL) {
        sim_cpu_friction_flush(fr);
    }
    uint64_t total = 0;
    for (uint32_t i = 0; fr != NULL && i < fr->n; ++i) {
        total += fr->count[fr->last][i];
    }
    SIM_TRY(sim_state_set_contact_count(out, total, err));
    uint64_t k = 0;
    for (uint32_t i = 0; fr != NULL && i < fr->n; ++i) {
        const sim_cpu_slot *row = fr->table[fr->last] + fr->row[i];
        const uint64_t first = k;
        for (uint32_t s = 0; s < fr->count[fr->last][i]; ++s) {
            sim_state_contact c = {i, row[s].partner, row[s].h.xi, row[s].h.roll};
            uint64_t at = k++; /* insertion by partner: rows are a few entries long */
            while (at > first && out->contacts[at - 1].j > c.j) {
                out->contacts[at] = out->contacts[at - 1];
                --at;
            }
            out->contacts[at] = c;
        }
    }
    return SIM_OK;
}
