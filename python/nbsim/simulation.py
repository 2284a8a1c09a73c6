# SPDX-License-Identifier: MIT
"""A simulation: one session of the library (nbsim/session.h), driven frame by frame through the
per-frame pipeline the program and the viewer use (nbsim/run_loop.h).

Lifetimes: every array and dict a Simulation returns is a copy owned by Python, valid for as long
as Python keeps it, never changed by the simulation afterwards. The simulation's own memory is
freed by close() (or `with`, or when the object is collected); any call after close() raises
nbsim.Error.

Ctrl-C: run() and step() (and opening, which computes the initial forces) stop within a fraction
of a second on SIGINT and raise KeyboardInterrupt; the simulation then holds exactly the state
after the last complete step (a step cut short is rolled back) and can go on. This holds in the
main thread while SIGINT has Python's default handler; stop() does the same from any thread,
without an exception (run() returns the frames it completed).

Threads: one simulation takes one call at a time (a lock); the library's work runs without the
GIL, so other Python threads go on meanwhile."""
import logging
import os
import signal
import threading

import numpy as np

from . import params as _params
from ._lib import (as_uint, check, ffi, lib, map_names, new_error, path_bytes, struct_dict,
                   text)
from .errors import BadArgumentError, Error
from .state import cstate_from_arrays, state_of, take_contacts

log = logging.getLogger("nbsim")

_BACKENDS = {"auto": "SIM_BACKEND_CHOICE_AUTO", "cpu": "SIM_BACKEND_CHOICE_CPU",
             "cuda": "SIM_BACKEND_CHOICE_CUDA"}


def _kernel_names():
    """The per-step phases the run statistics keep (run_stats.h's SIM_RUN_KERNEL_LIST), by the
    names the summary uses: SIM_RUN_KERNEL_TRIPLET_CULL -> "triplet_cull"."""
    out = {}
    for name, value in ffi.typeof("sim_run_kernel").relements.items():
        if name != "SIM_RUN_KERNEL_COUNT":
            out[name[len("SIM_RUN_KERNEL_"):].lower()] = value
    return dict(sorted(out.items(), key=lambda kv: kv[1]))


KERNELS = _kernel_names()
# The step's phases, as last_timing's keys ("drift_ms", ...): they add up to "step_ms".
PHASES = tuple(ffi.string(lib.sim_frame_phase_field(i)).decode()
               for i in range(lib.sim_frame_phase_count()))


class _Notices:
    """Where the library's notices land (through nbsim_py_notice): the simulation's list and the
    "nbsim" logger (a warning each; logging.getLogger("nbsim").setLevel(logging.ERROR) silences
    them). Holds no reference to the simulation, so the C handle makes no cycle."""

    def __init__(self, keep=1000):
        self.lines = []
        self.keep = keep

    def add(self, line):
        if not line:
            return
        self.lines.append(line)
        del self.lines[:-self.keep]
        log.warning("%s", line)


@ffi.def_extern()
def nbsim_py_notice(ctx, line):
    ffi.from_handle(ctx).add(text(line))


def _pair_choice(name):
    if not isinstance(name, str):
        raise TypeError("pair_map must be a str, not %s" % type(name).__name__)
    m = lib.sim_pair_choice_from_name(name.encode())
    if m < 0:
        raise BadArgumentError("pair_map %r is not a pair map; valid: auto, full, %s"
                               % (name, ", ".join(map_names(2))))
    return m


def _triplet_map(name):
    if not isinstance(name, str):
        raise TypeError("triplet_map must be a str, not %s" % type(name).__name__)
    m = lib.sim_map_from_name(3, name.encode())
    if m < 0:
        raise BadArgumentError("triplet_map %r is not a triplet map; valid: auto, %s"
                               % (name, ", ".join(map_names(3))))
    return m


def _triplets_mode(value):
    if value in ("auto", None):
        return lib.SIM_TRIPLETS_AUTO
    if value in (True, "on", 1):
        return lib.SIM_TRIPLETS_ON
    if value in (False, "off", 0):
        return lib.SIM_TRIPLETS_OFF
    raise BadArgumentError("triplets must be 'auto', True/'on' or False/'off', not %r" % (value,))


class _SigintGuard:
    """SIGINT raises the simulation's stop flag while the library works (main thread, Python's
    default handler only: a program with its own SIGINT handler keeps it)."""

    def __init__(self, flag):
        self.flag = flag
        self.installed = False

    def __enter__(self):
        if (threading.current_thread() is threading.main_thread() and
                signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self.installed = bool(lib.nbsim_py_sigint_begin(self.flag))
        return self

    def __exit__(self, *exc):
        if self.installed:
            lib.nbsim_py_sigint_end()
            self.installed = False
        return False


def _insert_apply(c, settings):
    """Insertion settings (include/nbsim/insert.h) by scene-file key into config c, by the
    library's rules; the bits of those given."""
    given = 0
    for key, value in settings.items():
        k = lib.sim_insert_from_key(key.encode())
        if k < 0:
            known = [text(lib.sim_insert_key_name(j)) for j in
                     range(ffi.typeof("sim_insert_key").relements["SIM_INSERT_KEY_COUNT"])]
            raise BadArgumentError("unknown insertion setting %r; known: %s"
                                   % (key, ", ".join(known)))
        if isinstance(value, (tuple, list)):
            value = ",".join(repr(float(v)) for v in value)
        err = new_error()
        check(lib.sim_insert_set(ffi.addressof(c[0], "insert"), k, str(value).encode(), err), err)
        given |= 1 << k
    return given


class Simulation:
    """N spheres with contact forces (and ATM triplet forces), on the CPU reference or CUDA.

    Simulation(scene="gas", n=None, seed=None, **settings): a built-in scene (nbsim.scenes()) or a
    scene / state / trajectory file; Simulation.from_arrays(positions, ...) the caller's bodies.

    Settings (the command line's flags of the same names): backend "auto" | "cpu" | "cuda";
    pair_map (a 2-D map name, "full" on CUDA, or "auto": timed on this GPU); triplet_map (a 3-D map
    name or "auto"); tile 32 | 64 | 128 (default: the backend's fastest); cull True | False
    (culled contacts); triplets "auto" | True | False; gpus (int or "all": the step split over
    GPUs of this machine, or CPU threads with backend="cpu"); threads (CPU backend's OpenMP
    threads, 0: default); sort_every (re-sort every K steps, 0: default); phase_times "sampled"
    (on the GPU each phase timed on about one step in ten and on re-sorts, the other steps timed
    whole and spread in those proportions: a mark costs a GPU a few microseconds; the CPU times
    every phase either way) | "every" (every step's phases); params (a dict of physics parameters by scene-file key, nbsim.params.keys(): they
    override the scene's); insert (a dict of insertion settings by scene-file key, "insert",
    "insert_rate", ...: bodies poured in during the run, as --insert; values the command line's
    text, or a tuple of numbers; they override the scene file's).
    Backend, tile and GPUs are fixed for a simulation's life: to change them, open another one
    from this one's state (Simulation.from_state(sim.state(), params=sim.params, ...))."""

    def __init__(self, scene="gas", *, n=None, seed=None, backend="auto", pair_map=None,
                 triplet_map=None, tile=None, cull=True, triplets="auto", gpus=1, threads=0,
                 sort_every=0, phase_times="sampled", params=None, insert=None, _bodies=None):
        self._lock = threading.RLock()
        self._session = None
        self._notices = _Notices()
        self._handle = ffi.new_handle(self._notices)
        self._stop = ffi.new("sig_atomic_t *")
        self._stop_asked = False
        self._recording = None
        self._logging = None
        c = ffi.new("sim_session_config *")
        c[0] = lib.sim_session_config_default()
        c.scene = path_bytes(scene, "scene")
        if n is not None:
            c.n = as_uint("n", n, 1, 2 ** 32 - 1)
        if seed is not None:
            c.seed = as_uint("seed", seed, 0, 2 ** 64 - 1)
            c.seed_set = 1
        if backend not in _BACKENDS:
            raise BadArgumentError("backend must be auto, cpu or cuda, not %r" % (backend,))
        c.backend = getattr(lib, _BACKENDS[backend])
        if pair_map == "auto":
            c.autotune |= lib.SIM_AUTOTUNE_PAIR
        elif pair_map is not None:
            c.config.pair_map = _pair_choice(pair_map)
            c.pair_map_set = 1
        if triplet_map == "auto":
            c.autotune |= lib.SIM_AUTOTUNE_TRIPLET
        elif triplet_map is not None:
            c.config.triplet_map = _triplet_map(triplet_map)
            c.triplet_map_set = 1
        if tile is not None:
            tile = as_uint("tile", tile, 1, 1 << 20)
            if not lib.sim_pair_tile_valid(tile):
                raise BadArgumentError("tile = %d: must be 32, 64 or 128" % tile)
            c.config.tile = tile
            c.tile_set = 1
        if c.autotune and not c.tile_set:
            c.autotune |= lib.SIM_AUTOTUNE_TILE
        if backend == "cpu" and c.config.pair_map == lib.SIM_PAIR_FULL:
            raise BadArgumentError("pair_map 'full' is a CUDA kernel; the CPU backend runs the "
                                   "symmetric tiled sweep only")
        c.config.cull = 1 if cull else 0
        c.triplets = _triplets_mode(triplets)
        if gpus == "all":
            c.gpus = lib.SIM_GPUS_ALL
        else:
            c.gpus = as_uint("gpus", gpus, 1, 1024)
        c.config.cpu_threads = as_uint("threads", threads, 0, 4096)
        c.config.sort_every = as_uint("sort_every", sort_every, 0, 1 << 30)
        timing = (lib.sim_phase_timing_from_name(phase_times.encode())
                  if isinstance(phase_times, str) else -1)
        if timing < 0:
            raise BadArgumentError("phase_times must be sampled or every, not %r" % (phase_times,))
        c.config.phase_timing = timing
        if _bodies is not None:
            # The caller's bodies: their parameters whole, from the defaults (load_bodies), and
            # the bodies under a scene file's rules in that box (finite, inside the walls).
            c.params = lib.sim_params_default()
            if params:
                _params.apply(c.params, dict(params))
            err = new_error()
            check(lib.sim_scene_check_bodies(_bodies.c, ffi.addressof(c, "params"),
                                             1 if _bodies.saved else 0, err), err)
            c.bodies = _bodies.c
        elif params:
            c.params_given = _params.apply(c.params, dict(params))
        if insert:
            c.insert_given = _insert_apply(c, dict(insert))
        c.interactive = 0
        c.energy_every = 1
        c.config.stop = self._stop
        self._open(c)
        c.bodies = ffi.NULL  # copied by the session; reset() reloads its copy
        self._config = c

    # ---- opening and closing ----

    def _open(self, c):
        """Opens a session for config c; on success it replaces the current one."""
        err = new_error()
        check(lib.sim_session_resolve_launch(c, err), err)
        out = ffi.new("sim_session **")
        with _SigintGuard(self._stop):
            st = lib.sim_session_open(out, c, err)
        self._raise_if_sigint(st)
        check(st, err)
        run = ffi.new("sim_run *")
        run.session = out[0]
        run.energy_every = 0
        run.notice = lib.nbsim_py_notice
        run.notice_ctx = self._handle
        self._close_session()
        self._session = out[0]
        self._run = run
        self._take_notices()

    def _raise_if_sigint(self, status):
        if status == lib.SIM_INTERRUPTED or self._stop[0]:
            asked = self._stop_asked
            self._stop[0] = 0
            self._stop_asked = False
            if not asked:
                raise KeyboardInterrupt
            return True
        return False

    def _ready(self):
        if self._session is None:
            raise Error("the simulation is closed")
        return self._session

    def _close_session(self):
        if self._session is None:
            return
        run = self._run
        if run.log.file != ffi.NULL:
            lib.sim_timing_log_abandon(ffi.addressof(run, "log"))
        lib.sim_run_stats_free(ffi.addressof(run, "stats"))
        lib.sim_session_close(self._session)  # stops a recording too
        self._session = None
        self._recording = None
        self._logging = None

    def close(self):
        """Frees the simulation (a trajectory being recorded is completed first). Idempotent."""
        with self._lock:
            if self._session is not None and self._recording is not None:
                try:
                    self.stop_recording()
                except Error:
                    pass
            if self._session is not None and self._logging is not None:
                try:
                    self.stop_log()
                except Error:
                    pass
            self._close_session()

    def __enter__(self):
        with self._lock:
            self._ready()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @classmethod
    def from_file(cls, path, **settings):
        """A scene file, a state saved by save_state() or --save-state, or the last complete
        frame of a trajectory (.xyz, .lammpstrj, .nc)."""
        if not os.path.exists(path):
            raise BadArgumentError("%s: no such file" % (path,))
        return cls(scene=os.fspath(path), **settings)

    @classmethod
    def from_arrays(cls, positions, velocities=None, radii=None, densities=None, masses=None,
                    omega=None, contacts=None, *, name="arrays", params=None, _saved=False,
                    **settings):
        """The caller's bodies (copied): positions (N, 3) [m], velocities (N, 3) [m/s] (default
        0), radii (N,) or one number [m], densities (N,) or one number [kg/m^3] (default 1) or
        masses (N,) [kg]; omega (N, 3) [rad/s] (default 0); contacts: friction's histories
        (State.contacts; a frictional run resumes with its springs).
        params: the physics (a dict by key; the rest the library's defaults: no gravity, box
        half-width 20 m, ...), taken whole. name: what logs and summaries call the scene (not a
        built-in scene's name); reset() reloads these bodies.
        The bodies follow a scene file's rules (nbsim/scene.h, sim_scene_check_bodies): finite
        numbers and every centre inside the walls at +-box_half; else BadArgumentError (a
        ValueError) naming the body by its index and the problem."""
        bodies = cstate_from_arrays(positions, velocities, radii, densities, masses, omega,
                                    contacts)
        bodies.saved = _saved
        return cls(scene=name, params=params, _bodies=bodies, **settings)

    @classmethod
    def from_state(cls, state, *, params=None, name="arrays", **settings):
        """A State (sim.state(), nbsim.read_state()) as the bodies: from_arrays of its arrays,
        with the centres a run may reach (up to 1.5 box_half, as a saved state's) allowed."""
        return cls.from_arrays(state.positions, state.velocities, state.radii,
                               masses=state.masses, omega=state.omega, contacts=state.contacts,
                               name=name, params=params, _saved=True, **settings)

    # ---- what runs ----

    def _info(self):
        return lib.sim_session_info(self._ready())

    def info(self):
        """What runs now, as a dict: scene, n, backend, device, gpus, maps, tile, culling,
        triplets, frame, steps, time, parameters, where the maps came from."""
        with self._lock:
            i = self._info()
            c = i.config
            return {
                "scene": text(i.scene), "n": i.n, "backend": text(i.backend),
                "device": text(i.device), "gpus": i.gpus,
                "pair_map": text(lib.sim_pair_choice_name(c.pair_map)),
                "triplet_map": text(lib.sim_map_name(3, c.triplet_map)),
                "tile": c.tile, "cull": bool(c.cull), "culls": bool(lib.sim_config_culls(
                    ffi.addressof(i, "config"))),
                "triplets": bool(i.params.triplets), "cpu_threads": c.cpu_threads,
                "frame": i.frame, "steps": i.steps, "partial_steps": i.partial_steps,
                "time": i.sim_time, "unique_pairs": i.unique_pairs,
                "unique_triples": i.unique_triples, "params": _params.as_dict(i.params),
                "maps_source": text(i.maps_source), "recording": text(i.dump_path) or None,
                "inserted": i.inserted, "insertion": text(i.insertion) or None,
            }

    def _get(self, key):
        return self.info()[key]

    n = property(lambda self: self._get("n"), doc="bodies")
    scene = property(lambda self: self._get("scene"), doc="the scene's name or file")
    backend = property(lambda self: self._get("backend"), doc='"cpu" or "cuda"')
    device = property(lambda self: self._get("device"), doc="the GPU's name, or the CPU's")
    frame = property(lambda self: self._get("frame"), doc="frames run since the scene loaded")
    steps = property(lambda self: self._get("steps"), doc="integration steps since then")
    time = property(lambda self: self._get("time"), doc="simulated time [s]")
    pair_map = property(lambda self: self._get("pair_map"), doc="the pair map (or 'full')")
    triplet_map = property(lambda self: self._get("triplet_map"), doc="the triplet map")
    tile = property(lambda self: self._get("tile"), doc="bodies per pair tile")
    cull = property(lambda self: self._get("cull"), doc="culled contacts asked for")
    triplets = property(lambda self: self._get("triplets"), doc="ATM triplet forces on")

    @property
    def params(self):
        """The effective physics parameters (a dict; a copy: change them with set_params)."""
        return self._get("params")

    @property
    def dt(self):
        return self.params["dt"]

    @property
    def notices(self):
        """What the library said so far (fallbacks, defaults chosen, warnings), oldest first."""
        with self._lock:
            if self._session is not None:
                self._take_notices()
            return list(self._notices.lines)

    def _take_notices(self):
        for line in text(lib.sim_session_take_notices(self._session)).split("\n"):
            self._notices.add(line)

    def _call(self, fn, *args):
        """A session call that may fail: its notices taken, its failure raised."""
        err = new_error()
        st = fn(self._ready(), *args, err)
        self._take_notices()
        check(st, err)

    # ---- control ----

    def set_params(self, **values):
        """New physics parameters from the next step (by scene-file key; the others stay):
        sim.set_params(dt=1e-4, gravity=(0, -9.81, 0), restitution=0.8, triplets=True). Checked by
        the library's rules; a refused value changes nothing."""
        with self._lock:
            p = ffi.new("sim_params *", self._info().params)
            _params.apply(p, values)
            self._call(lib.sim_session_set_params, p)

    def set_maps(self, pair=None, triplet=None):
        """Switches the pair map (a 2-D map name or "full", CUDA only) and / or the triplet map;
        None keeps one."""
        with self._lock:
            c = self._info().config
            pm = c.pair_map if pair is None else _pair_choice(pair)
            tm = c.triplet_map if triplet is None else _triplet_map(triplet)
            self._call(lib.sim_session_set_maps, pm, tm)

    def set_cull(self, on):
        """Culled contacts on or off from the next step (the same forces, up to rounding)."""
        with self._lock:
            self._call(lib.sim_session_set_cull, 1 if on else 0)

    def set_triplets(self, on):
        with self._lock:
            self._call(lib.sim_session_set_triplets, 1 if on else 0)

    def set_steps_per_frame(self, steps):
        with self._lock:
            self._call(lib.sim_session_set_steps_per_frame,
                       as_uint("steps_per_frame", steps, 1, 100000))

    def reset(self):
        """Reloads the scene (the same N and seed, or the arrays given) at frame 0."""
        with self._lock:
            self._call(lib.sim_session_reset)

    def stop(self):
        """Asks the work under way to stop (any thread; also before it starts): run() returns the
        frames it completed, keeping the steps done of the frame under way."""
        self._stop_asked = True
        self._stop[0] = 1

    # ---- running ----

    def _frame(self, last):
        t = ffi.new("sim_frame_timing *")
        err = new_error()
        st = lib.sim_run_frame(self._run, 1 if last else 0, t, err)
        self._take_notices()
        if st == lib.SIM_OK:
            self._last_timing = t
        elif st != lib.SIM_INTERRUPTED:
            check(st, err)
        return st

    def run(self, frames=1):
        """Runs frames (each steps_per_frame steps) and returns how many completed: all of them,
        or fewer after stop(). Ctrl-C: KeyboardInterrupt, the steps completed kept."""
        with self._lock:
            frames = as_uint("frames", frames, 0, 2 ** 62)
            self._ready()
            done = 0
            with _SigintGuard(self._stop):
                while done < frames and not self._stop[0]:
                    st = self._frame(done + 1 == frames)
                    if st != lib.SIM_OK:
                        break
                    done += 1
            self._raise_if_sigint(lib.SIM_OK)
            return done

    def step(self, steps=1):
        """Advances `steps` integration steps, as one frame (frame counts 1 more). Returns the
        steps completed (fewer after stop())."""
        with self._lock:
            steps = as_uint("steps", steps, 1, 100000)
            old = self._info().params.steps_per_frame
            before = self._info().steps
            if steps != old:
                self._call(lib.sim_session_set_steps_per_frame, steps)
            try:
                self.run(1)
            finally:
                if steps != old:
                    self._call(lib.sim_session_set_steps_per_frame, old)
            return self._info().steps - before

    # ---- state ----

    def _read(self, spin=True, forces=True):
        """The bodies now, as the library writes them straight into numpy arrays of this call's:
        pos (N, 4), vel (N, 4), spin (N, 4) or None, forces (N, 3) or None, contacts, and
        (step, time). Only what is asked for is allocated (pos and vel always: the library
        writes both)."""
        with self._lock:
            n = self._info().n
            pos, vel = np.zeros((n, 4)), np.zeros((n, 4))
            w = np.zeros((n, 4)) if spin else None
            f = np.zeros((n, 3)) if forces else None
            st = ffi.new("sim_state *")
            st.n = n
            st.pos = ffi.cast("sim_vec4d *", ffi.from_buffer(pos))
            st.vel = ffi.cast("sim_vec4d *", ffi.from_buffer(vel))
            st.spin = ffi.NULL if w is None else ffi.cast("sim_vec4d *", ffi.from_buffer(w))
            try:  # the library sizes (reallocates) the contacts; the bodies stay ours
                self._call(lib.sim_session_read_state, st, ffi.NULL if f is None else
                           ffi.cast("sim_vec3d *", ffi.from_buffer(f)))
            finally:
                contacts = take_contacts(st)
            i = self._info()
            return pos, vel, w, f, contacts, (i.steps, i.sim_time)

    def state(self):
        """The bodies now (a State owned by Python): positions, velocities, radii, masses, the
        last total force per body, omega, friction's contact histories, step and time. The
        library writes them into the State's own arrays, one copy: positions and radii are views
        of one (N, 4) array, velocities and masses of another (docs/python.md)."""
        pos, vel, w, f, contacts, (step, time) = self._read()
        return state_of(pos, vel, w, f, contacts, step, time)

    # Each reads only what it returns (no forces unless asked, no spin): a view of the array
    # the library filled, no copy.
    positions = property(lambda self: self._read(False, False)[0][:, :3],
                         doc="(N, 3) [m], Python's (a view of an (N, 4) array with the radii)")
    velocities = property(lambda self: self._read(False, False)[1][:, :3],
                          doc="(N, 3) [m/s], Python's (a view of an (N, 4) array with the masses)")
    forces = property(lambda self: self._read(False, True)[3],
                      doc="(N, 3) last force [N], Python's")
    radii = property(lambda self: self._read(False, False)[0][:, 3],
                     doc="(N,) [m], Python's (a view of the (N, 4) array of positions)")
    masses = property(lambda self: self._read(False, False)[1][:, 3],
                      doc="(N,) [kg], Python's (a view of the (N, 4) array of velocities)")
    omega = property(lambda self: self._read(True, False)[2][:, :3],
                     doc="(N, 3) angular velocity [rad/s], Python's (turns only with friction)")
    contacts = property(lambda self: self._read(False, False)[4],
                        doc="friction's contact histories (nbsim.CONTACT_DTYPE rows), Python's")

    def energy(self):
        """Energies now [J]: kinetic (translation), rotational, contact, atm, gravity, total."""
        with self._lock:
            e = ffi.new("sim_energy *")
            self._call(lib.sim_session_energy, e)
            return struct_dict(e[0])

    def mean_height(self):
        """The bodies' mean position along -gravity [m] (+y without gravity)."""
        with self._lock:
            h = ffi.new("double *")
            self._call(lib.sim_session_mean_height, h)
            return h[0]

    def tile_pairs(self):
        """The interacting tile pairs (I >= J, tiles of the sorted body order) at the current
        positions, as an (k, 2) array; empty when contacts are not culled."""
        with self._lock:
            count = ffi.new("uint64_t *")
            self._call(lib.sim_session_tile_pairs, ffi.NULL, 0, count)
            out = np.zeros((count[0], 2), dtype=np.uint32)
            if count[0]:
                self._call(lib.sim_session_tile_pairs,
                           ffi.cast("sim_tile2 *", ffi.from_buffer(out)), count[0], count)
            return out[:count[0]].astype(np.int64)

    # ---- timings ----

    @property
    def last_timing(self):
        """The last frame's timings (sim_frame_timing as a dict: per-phase ms summed over the
        frame's steps, blocks, culling counts); None before the first frame."""
        with self._lock:
            t = getattr(self, "_last_timing", None)
            return None if t is None else struct_dict(t[0])

    def timing_summary(self):
        """Per-step time of each phase over every frame run [ms]: {phase: {median, p95, min,
        max}}, and "frames". Phases: run_stats.h's list (pair, sort, cull, contact, triplet,
        triplet_cull, integrate, comm, step)."""
        with self._lock:
            self._ready()
            stats = ffi.addressof(self._run, "stats")
            out = {"frames": int(stats.count)}
            for name, k in KERNELS.items():
                out[name] = struct_dict(lib.sim_run_stats_get(stats, k))
            return out

    def write_summary(self, path):
        """The run summary as JSON, the file --summary writes."""
        with self._lock:
            i = self._info()
            end = ffi.new("sim_run_end *")
            done = ffi.new("char[]", b"done")
            empty = ffi.new("char[]", b"")
            end.stop = done
            end.detail = empty
            end.seed = self._config.seed
            end.seed_used = 1 if lib.sim_scene_is_builtin(i.scene) else 0
            err = new_error()
            check(lib.sim_run_stats_write_json(ffi.addressof(self._run, "stats"), i, end,
                                               path_bytes(path), err), err)

    def start_log(self, path, energy_every=1):
        """The per-frame timing log (CSV, as --log) from the next frame, with energies every
        energy_every frames (0: never)."""
        with self._lock:
            self._ready()
            if self._logging is not None:
                raise BadArgumentError("a timing log is open already: %s" % self._logging)
            err = new_error()
            check(lib.sim_timing_log_open(ffi.addressof(self._run, "log"), path_bytes(path),
                                          err), err)
            self._run.energy_every = as_uint("energy_every", energy_every, 0, 1 << 30)
            self._logging = os.fspath(path)

    def stop_log(self):
        """Completes the timing log (written to its path only now, whole)."""
        with self._lock:
            if self._logging is None:
                return
            self._logging = None
            self._run.energy_every = 0
            err = new_error()
            check(lib.sim_timing_log_close(ffi.addressof(self._run, "log"), err), err)

    # ---- saves ----

    def save_state(self, path):
        """The current state with the last force per body as a scene file at full double
        precision (what --save-state writes): Simulation.from_file(path) continues from it."""
        with self._lock:
            self._call(lib.sim_session_save_state, path_bytes(path))

    def load_state(self, path):
        """Replaces the bodies and parameters with a file's (scene, saved state, trajectory),
        keeping backend, maps, tile and culling; N may change. Frame and time start at 0."""
        with self._lock:
            self._ready()
            c = ffi.new("sim_session_config *", self._config[0])
            c.scene = path_bytes(path, "state file")
            c.n = 0
            c.seed_set = 0
            c.bodies = ffi.NULL
            c.params_given = 0
            if not os.path.exists(path):
                raise BadArgumentError("%s: no such file" % (path,))
            if self._recording is not None:
                self.stop_recording()
            if self._logging is not None:
                self.stop_log()
            self._open(c)
            self._config = c

    def record(self, path, every=1):
        """Records a trajectory (.xyz, .lammpstrj, .nc or .pvd: what --dump writes) from the
        current state on, every `every`-th frame, until stop_recording() or close(). A .pvd is a
        ParaView series: run.pvd and a .vtu a frame in the folder run/, with the contact
        network's forces (docs/trajectories.md)."""
        with self._lock:
            if self._recording is not None:
                raise BadArgumentError("a trajectory is being recorded already: %s"
                                       % self._recording)
            self._call(lib.sim_session_dump_start, path_bytes(path),
                       as_uint("every", every, 1, 1 << 30))
            self._recording = os.fspath(path)

    def stop_recording(self):
        """Completes the trajectory; returns what it cost (frames, bytes, ms on each thread)."""
        with self._lock:
            if self._recording is None:
                return None
            self._recording = None
            stats = ffi.new("sim_dump_stats *")
            self._call(lib.sim_session_dump_stop, stats)
            return struct_dict(stats[0])

    def cull_info(self):
        """The culling pass as planned: active, levels, tiles, super_tiles, items."""
        with self._lock:
            ci = ffi.new("sim_cull_info *")
            lib.sim_session_cull_info(self._ready(), ci)
            d = struct_dict(ci[0])
            d["active"] = bool(d["active"])
            return d

    def __repr__(self):
        if getattr(self, "_session", None) is None:
            return "<nbsim.Simulation (closed)>"
        i = self.info()
        return ("<nbsim.Simulation %s: %d bodies, %s, pair map %s, tile %d, frame %d, t = %.6g s>"
                % (i["scene"], i["n"], i["backend"], i["pair_map"], i["tile"], i["frame"],
                   i["time"]))

