/* SPDX-License-Identifier: MIT
 * nbsim — time integration: velocity Verlet's halves for the bodies and their spin. No
 * constants; read once a precision by physics_impl.h. */
/* Rotation in the velocity-Verlet halves (with sim_verlet_first / _second): w += dt/2 T / I,
 * I = SIM_INERTIA_FACTOR m r^2, as LAMMPS's fix nve/sphere. No orientation is kept. */
SIM_HD void SIM_FN(sim_verlet_spin)(SIM_V3 *w, SIM_V3 torque, SIM_V4 pos, SIM_R mass, SIM_R dt) {
    const SIM_R h = SIM_K(0.5) * dt / SIM_K(SIM_INERTIA_FACTOR) / (pos.w * pos.w * mass);
    w->x += h * torque.x;
    w->y += h * torque.y;
    w->z += h * torque.z;
}

/* Velocity Verlet, kick-drift-kick: first = half kick with F_n, then drift [m]. */
SIM_HD void SIM_FN(sim_verlet_first)(SIM_V4 *pos, SIM_V4 *vel, SIM_V3 force, SIM_R dt) {
    const SIM_R h = SIM_K(0.5) * dt / vel->w; /* dt / 2m [s/kg] */
    vel->x += h * force.x;
    vel->y += h * force.y;
    vel->z += h * force.z;
    pos->x += dt * vel->x;
    pos->y += dt * vel->y;
    pos->z += dt * vel->z;
}

/* ... then, with F_{n+1} from the new positions and the half-step velocities, the second half
 * kick. */
SIM_HD void SIM_FN(sim_verlet_second)(SIM_V4 *vel, SIM_V3 force, SIM_R dt) {
    const SIM_R h = SIM_K(0.5) * dt / vel->w;
    vel->x += h * force.x;
    vel->y += h * force.y;
    vel->z += h * force.z;
}
