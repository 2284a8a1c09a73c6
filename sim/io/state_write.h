/* SPDX-License-Identifier: MIT
 * nbsim — private: sim_state_save's file (include/nbsim/scene.h) written in pieces, for a state
 * that no process holds whole (a run split in space, sim/space/space_save.c): the header for n
 * bodies, the bodies' rows in order in any number of pieces, then, when there are histories, the
 * contacts' header and rows. The same bytes as one sim_state_save of the whole state. Errors show
 * in ferror(f) (sim_output_commit reports them); the row writers return -1 at the first. */
#ifndef SIM_IO_STATE_WRITE_H
#define SIM_IO_STATE_WRITE_H

#include <stdio.h>

#include "nbsim/insert.h"
#include "nbsim/params.h"
#include "nbsim/state.h"

/* ins: the inserter's settings and progress (NULL: none). */
void sim_state_write_head(FILE *f, const sim_params *p, uint32_t n, int forces,
                          const sim_inserter *ins);
/* st's n bodies (forces: as fx fy fz, NULL: none). */
int sim_state_write_bodies(FILE *f, const sim_state *st, const sim_vec3d *forces);
void sim_state_write_contacts_head(FILE *f, uint64_t count);
int sim_state_write_contacts(FILE *f, const sim_state_contact *contacts, uint64_t count);

#endif /* SIM_IO_STATE_WRITE_H */
