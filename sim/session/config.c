/* SPDX-License-Identifier: MIT
 * nbsim — what a caller asks of a session: its defaults, and where this process sits in a run
 * over several (host code without a device: the command line's fuzz target builds it). */
#include <string.h>

#include "nbsim/dist.h"
#include "nbsim/session.h"

sim_session_config sim_session_config_default(void) {
    sim_session_config c;
    memset(&c, 0, sizeof c);
    strcpy(c.scene, "gas");
    c.seed = 1;
    c.params = sim_params_default();
    c.triplets = SIM_TRIPLETS_AUTO;
    c.backend = SIM_BACKEND_CHOICE_AUTO;
    c.config = sim_backend_config_default();
    c.local_rank = -1;
    c.nccl_id_wait = SIM_DIST_ID_WAIT_S;
    c.energy_every = 1;
    c.insert = sim_insert_def_default();
    return c;
}

int sim_session_config_writes_outputs(const sim_session_config *c) {
    return c->world <= 1 || c->rank == 0;
}

sim_status sim_session_resolve_launch(sim_session_config *c, sim_error *err) {
    sim_dist_env env;
    int found = 0;
    sim_error env_err;
    const sim_status env_status = sim_dist_from_env(&env, &found, &env_err);
    /* Started by mpirun (not srun: its MPI start-up depends on how Slurm was built) as one of
     * several ranks, in a build with MPI and without --nccl-id: the id goes through MPI. */
    const int mpi_launch = env_status == SIM_OK && found && env.world > 1 &&
                           strcmp(env.source, "SLURM") != 0 && sim_dist_have_mpi() &&
                           c->nccl_id_path[0] == '\0';
    const int multi_process =
        c->world > 0 || c->rank_given || c->nccl_id_path[0] != '\0' || mpi_launch;
    const int gpus = c->gpus;
    if ((gpus > 1 || gpus == SIM_GPUS_ALL || multi_process) && c->autotune != 0) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: the maps are timed on one GPU; run --pair-map auto there and name "
                        "the maps for a multi-GPU run",
                        "--pair-map/--triplet-map auto");
    }
    if ((gpus > 1 || gpus == SIM_GPUS_ALL || multi_process) && c->interactive) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: the viewer runs on one GPU; several GPUs are for headless runs "
                        "(--frames F)",
                        multi_process ? "--rank/--world/--nccl-id" : "--gpus");
    }
    /* one process alone has nothing to split: --decompose space runs it whole */
    if (!multi_process && c->decompose == SIM_DECOMPOSE_SPACE && (gpus > 1 || gpus < 0)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: the spatial split runs over processes that mpirun starts "
                        "(mpirun -np R nbsim --backend cpu --decompose space), not --gpus",
                        "--decompose space");
    }
    if (!multi_process) {
        if (gpus > 1 && c->backend != SIM_BACKEND_CHOICE_CPU && !sim_multi_have_nccl()) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "%s: this build has no NCCL, so it runs on one GPU only (rebuild "
                            "with NCCL: NCCL_ROOT=... or pip install nvidia-nccl-cu13)",
                            "--gpus");
        }
        return SIM_OK;
    }
    if (gpus == SIM_GPUS_ALL) { /* a host's processes would each take every GPU */
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: a run over processes names the GPUs of each process (--gpus N, the "
                        "same in every process)",
                        "--gpus all");
    }
    /* The CPU reference over processes: split in space over MPI (sim/space/space.h). */
    const int space = c->backend == SIM_BACKEND_CHOICE_CPU;
    if (space && c->decompose == SIM_DECOMPOSE_REPLICATE) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: the CPU reference replicates over threads of one process (--gpus N "
                        "--backend cpu); over processes it splits space (--decompose space)",
                        "--decompose replicate");
    }
    if (space && (!mpi_launch || gpus > 1)) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: the CPU reference splits space over processes that mpirun started "
                        "(mpirun -np R nbsim --backend cpu), one rank each%s",
                        "--backend cpu", sim_dist_have_mpi() ? "" : ", in a build with MPI");
    }
    if (!space && c->decompose == SIM_DECOMPOSE_SPACE) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: the spatial split runs the CPU reference only so far (--backend cpu)",
                        "--decompose space");
    }
    if (!space && !sim_multi_have_nccl()) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "%s: this build has no NCCL, so it runs on one GPU only (rebuild with "
                        "NCCL: NCCL_ROOT=... or pip install nvidia-nccl-cu13)",
                        "--world");
    }
    if (env_status != SIM_OK) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "%s", env_err.message);
    }
    if (c->world == 0) {
        if (!found && c->rank_given) { /* name the flag that was given */
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "%s: give --world W too, the processes in the run (or start it with "
                            "mpirun or srun)",
                            "--rank");
        }
        if (!found) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "%s: cannot tell this process's rank: give --rank R --world W, or "
                            "start it with mpirun or srun",
                            "--nccl-id");
        }
        c->world = env.world;
    }
    if (!c->rank_given) {
        if (!found) {
            return sim_fail(err, SIM_BAD_ARGUMENT,
                            "%s: give --rank R too (or start with mpirun or srun)", "--world");
        }
        c->rank = env.rank;
    }
    c->local_rank = found ? env.local_rank : -1;
    if (c->rank >= c->world) {
        return sim_fail(err, SIM_BAD_ARGUMENT, "--rank: %d is not below --world %d", c->rank,
                        c->world);
    }
    if (gpus > 1 && (long)gpus * c->world > SIM_MAX_RANKS) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        "--gpus %d: %d processes of %d GPUs each are more than %d ranks", gpus,
                        c->world, gpus, SIM_MAX_RANKS);
    }
    c->nccl_id_mpi = mpi_launch && c->world > 1; /* the CPU's split: only the settings check */
    if (c->nccl_id_path[0] == '\0' && c->world > 1 && !c->nccl_id_mpi) {
        return sim_fail(err, SIM_BAD_ARGUMENT,
                        sim_dist_have_mpi()
                            ? "%s: a run over processes needs --nccl-id FILE, a new file on a "
                              "path every rank sees, or mpirun"
                            : "%s: a run over processes needs --nccl-id FILE, a new file on a "
                              "path every rank sees",
                        "--world");
    }
    return SIM_OK;
}
