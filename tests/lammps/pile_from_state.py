#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""nbsim — a saved nbsim state (nbsim --save-state) as input for tests/lammps/in.pile_bench.

    pile_from_state.py STATE OUTDIR

writes into OUTDIR
  pile.data   atom_style sphere: id type diameter density x y z; Velocities: v, omega
  pile.model  pair_coeff per type pair, fix wall/gran per type and axis, fix gravity
  pile.scene  the same bodies for nbsim, without the saved springs (LAMMPS cannot read them:
              both codes start from the same state, every spring at zero)
and prints `n dt` of the state.

The mapping is docs/friction.md's (the linear law only: hooke + linear_history + rolling sds +
damping tsuji). nbsim's rolling dashpot is x 2 zeta sqrt(k m_eff) per pair; LAMMPS's `rolling
sds` takes a constant per type pair, so bodies are typed by density (a saved heap: the poured
spheres, density 1, and the carpet, density 30) and each type pair gets the dashpot of the
types' mean masses. That, the contact-onset weighting of nbsim's linear dashpot and LAMMPS's
nearer-wall-only rule (docs/friction.md: departures) change trajectories, not the work a step
does: this deck is for timing, not for comparing forces (tests/test_friction_lammps.c does that).
"""
import math
import os
import sys


def tsuji_alpha(c):
    """damping tsuji's factor alpha(c) (PairGranular::coeff)."""
    return (1.2728 - 4.2783 * c + 11.087 * c**2 - 22.348 * c**3 + 27.467 * c**4 -
            18.022 * c**5 + 4.8218 * c**6)


def tsuji_input(alpha):
    """The c whose alpha(c) is alpha (alpha falls monotonically on [0, 1]): bisection."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if tsuji_alpha(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return lo if abs(tsuji_alpha(lo) - alpha) < abs(tsuji_alpha(hi) - alpha) else hi


def damping_ratio(e):
    """sim_damping_ratio (sim/physics/physics.c): the linear law's zeta for restitution e."""
    if not 0.0 < e < 1.0:
        return 0.0
    lg = math.log(e)
    return -lg / math.sqrt(math.pi * math.pi + lg * lg)


def read_state(path):
    params, header, bodies = {}, None, []
    with open(path) as f:
        for raw in f:
            line = raw.split('#', 1)[0].strip()
            if not line:
                continue
            if header is None:
                if '=' in line:
                    key, value = (s.strip() for s in line.split('=', 1))
                    params[key] = value
                else:
                    header = line.split()
                continue
            if line.startswith('contacts'):
                break  # the springs: not carried over
            bodies.append(dict(zip(header, (float(v) for v in line.split()))))
    return params, header, bodies


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    params, header, bodies = read_state(sys.argv[1])
    out = sys.argv[2]
    if int(params.get('hertz', '0')) != 0:
        sys.exit('pile_from_state: the linear law only (Hertz rolling has no LAMMPS twin here)')
    k = float(params.get('stiffness', '1e4'))
    e = float(params.get('restitution', '0.9'))
    mu = float(params.get('friction', '0'))
    mu_r = float(params.get('rolling_friction', '0'))
    ratio = float(params.get('stiffness_ratio', str(2.0 / 7.0)))
    td = params.get('tangential_damping', 'auto')
    x = math.sqrt(ratio) if td == 'auto' else float(td)
    half = float(params['box_half'])
    dt = float(params['dt'])
    g = [float(v) for v in params.get('gravity', '0, 0, 0').split(',')]
    zeta = damping_ratio(e)
    c = tsuji_input(2.0 * zeta)

    densities = sorted({b['density'] for b in bodies})
    type_of = {d: t + 1 for t, d in enumerate(densities)}
    mass = {}
    for b in bodies:
        m = b['density'] * 4.0 / 3.0 * math.pi * b['radius']**3
        mass.setdefault(type_of[b['density']], []).append(m)
    mean_mass = {t: sum(v) / len(v) for t, v in mass.items()}
    types = len(densities)

    lim = 1.5 * half + 1.0  # saved centres may lie up to 1.5 box_half (assets/README.md)
    with open(os.path.join(out, 'pile.data'), 'w') as f:
        f.write('nbsim state %s\n\n%d atoms\n%d atom types\n\n' %
                (os.path.basename(sys.argv[1]), len(bodies), types))
        for axis in 'xyz':
            f.write('%.17g %.17g %slo %shi\n' % (-lim, lim, axis, axis))
        f.write('\nAtoms # sphere\n\n')
        for i, b in enumerate(bodies):
            f.write('%d %d %.17g %.17g %.17g %.17g %.17g\n' %
                    (i + 1, type_of[b['density']], 2.0 * b['radius'], b['density'], b['x'],
                     b['y'], b['z']))
        f.write('\nVelocities\n\n')
        for i, b in enumerate(bodies):
            f.write('%d %.17g %.17g %.17g %.17g %.17g %.17g\n' %
                    (i + 1, b['vx'], b['vy'], b['vz'], b.get('wx', 0.0), b.get('wy', 0.0),
                     b.get('wz', 0.0)))

    def model(m_eff):
        s = ('hooke %.17g %.17g tangential linear_history %.17g %.17g %.17g' %
             (k, c, ratio * k, x, mu))
        if mu_r > 0.0:
            s += ' rolling sds %.17g %.17g %.17g' % (ratio * k, x * 2.0 * zeta *
                                                       math.sqrt(m_eff * k), mu_r)
        return s + ' damping tsuji'

    with open(os.path.join(out, 'pile.model'), 'w') as f:
        for a in range(1, types + 1):
            for b in range(a, types + 1):
                ma, mb = mean_mass[a], mean_mass[b]
                f.write('pair_coeff %d %d %s\n' % (a, b, model(ma * mb / (ma + mb))))
        for t in range(1, types + 1):
            f.write('group type%d type %d\n' % (t, t))
            for axis in 'xyz':
                f.write('fix wall%s%d type%d wall/gran granular %s %splane %.17g %.17g\n' %
                        (axis, t, t, model(mean_mass[t]), axis, -half, half))
        gn = math.sqrt(sum(v * v for v in g))
        if gn > 0.0:
            f.write('fix gravity all gravity %.17g vector %.17g %.17g %.17g\n' %
                    (gn, g[0] / gn, g[1] / gn, g[2] / gn))

    with open(sys.argv[1]) as src, open(os.path.join(out, 'pile.scene'), 'w') as dst:
        for line in src:
            if line.startswith('contacts') or line.startswith('# ') and 'contacts' in line:
                break
            dst.write(line)
    print(len(bodies), repr(dt))


if __name__ == '__main__':
    main()
