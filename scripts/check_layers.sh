#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The layers of nbsim (ARCHITECTURE.md), checked from the #include lines alone: no build, a
# fraction of a second. One line per violation, "FILE:LINE: RULE: what and why", and exit 1.
#
#   sim->program     sim/ and include/ (the library) include nothing of app/, viewer/ or render/,
#                    and no GL, GLFW or GLEW: headless runs and bindings never touch a display
#   private-sim      outside sim/ and tests/ (app/, the viewer module, render/, bindings, and the
#                    public headers themselves) only include/nbsim/ is included: an include that
#                    resolves into sim/ reaches a private header. tests/ are white-box.
#   render->program  render/ (GL primitives) includes nothing of app/ or viewer/
#   viewer->app      viewer/ includes nothing of app/ (app -> viewer is the allowed direction)
#   capture          only the library calls sim_backend_capture*: trajectories are recorded
#                    through the session (sim_session_dump_start), never by a program itself
#   sim-order        inside sim/, a folder includes only its own files and those of the folders
#                    below it in SIM_ORDER (below, lowest first); a folder of sim/ with sources
#                    must have its place there. scripts/layer_refs.py checks the calls between
#                    files against the same order.
#   internal         include/nbsim/internal/ (the backends' interface and test hooks) is included
#                    only by the library, its tests and nbsim bench (app/bench/): the programs,
#                    the viewer, the bindings and the public headers see users' choices alone
#   prefix           one prefix per layer of the GPU code: the functions that sim/cuda/ (the CUDA
#                    backend) declares are sim_cuda_*, those of the shared GPU layer below it
#                    (sim/gpu/, sim/cull/, sim/nlist/) sim_gpu_*, so a name says where it lives
#
# An include "X" is resolved the way the compiler would find it on any of the project's include
# paths: beside the including file first, then include/, then sim/ (spelled from sim/, as the
# library spells its private headers), then the folders of the including layer, render/, viewer/
# and app/. Includes that resolve to no file of the tree (system and generated headers) are not
# layers' business.
#
# Usage: scripts/check_layers.sh [ROOT]      check the tree at ROOT (default: this repository)
#        scripts/check_layers.sh --self-test plant each kind of violation in a scratch tree and
#                                            check that each is caught, and a clean tree passes
set -euo pipefail

# The folders of sim/, lowest first (ARCHITECTURE.md says what each holds and why this order).
SIM_ORDER="core maps physics mesh io multi gpu cull nlist step cpu cuda space backends session"

check() {
  local root=$1
  cd "$root"
  # Every file of the tree (for the resolution), and the sources to check. Build folders and
  # hidden folders (.git, .devkit) at the top are not the tree.
  local files
  files=$(find . \( -path './build*' -o -path './.*' \) -prune -o -type f -print | sed 's|^\./||' |
          LC_ALL=C sort)
  printf '%s\n' "$files" | awk -v order="$SIM_ORDER" '
    # The folder of sim/ a path is in ("" outside sim/ or at its top).
    function folder(p,    parts) {
      if (split(p, parts, "/") < 3 || parts[1] != "sim") return ""
      return parts[2]
    }
    function layer(p) {
      if (p ~ /^sim\//) return "sim"
      if (p ~ /^include\//) return "include"
      if (p ~ /^app\//) return "app"
      if (p ~ /^viewer\//) return "viewer"
      if (p ~ /^render\//) return "render"
      if (p ~ /^tests\//) return "tests"
      return "other"
    }
    # a/b/../c -> a/c; ./ dropped; "" when it climbs out of the tree
    function normal(p,    n, parts, out, k, i) {
      n = split(p, parts, "/")
      k = 0
      for (i = 1; i <= n; ++i) {
        if (parts[i] == "" || parts[i] == ".") continue
        if (parts[i] == "..") { if (k == 0) return ""; --k; continue }
        out[++k] = parts[i]
      }
      p = ""
      for (i = 1; i <= k; ++i) p = p (i > 1 ? "/" : "") out[i]
      return p
    }
    # The file of folder `top` (recursively) that ends in "/x", the shortest path first.
    function under(top, x,    i, best, f) {
      best = ""
      for (i = 1; i <= nfiles; ++i) {
        f = all[i]
        if (index(f, top "/") != 1) continue
        if (f == top "/" x || substr(f, length(f) - length(x)) == "/" x) {
          if (best == "" || length(f) < length(best)) best = f
        }
      }
      return best
    }
    function resolve(from, x,    dir, p, own, order, n, k) {
      dir = from
      sub(/\/[^\/]*$/, "", dir)
      if (dir == from) dir = ""
      p = normal((dir != "" ? dir "/" : "") x)
      if (p != "" && (p in exists)) return p
      p = normal("include/" x)
      if (p != "" && (p in exists)) return p
      p = normal("sim/" x)
      if (p != "" && (p in exists)) return p
      own = from
      sub(/\/.*$/, "", own)
      n = split(own " render viewer app", order, " ")
      for (k = 1; k <= n; ++k) {
        if (order[k] !~ /^(app|viewer|render)$/) continue
        p = under(order[k], x)
        if (p != "") return p
      }
      return ""
    }
    function report(file, line, rule, what) {
      printf "%s:%d: %s: %s\n", file, line, rule, what
      ++violations
    }
    { all[++nfiles] = $0; exists[$0] = 1 }
    END {
      nranks = split(order, names, " ")
      for (k = 1; k <= nranks; ++k) rank[names[k]] = k
      for (i = 1; i <= nfiles; ++i) {
        f = all[i]
        if (f !~ /\.(c|h|cu|cuh|cc|cpp|hpp)$/) continue
        from = layer(f)
        ff = folder(f)
        line = 0
        while ((getline text < f) > 0) {
          ++line
          if (text ~ /sim_backend_capture/ && from != "sim" && from != "include" && from != "tests" &&
              text !~ /^[ \t]*(\/\*|\*|\/\/)/) {
            report(f, line, "capture", "sim_backend_capture* outside the library: trajectories " \
                   "are recorded through the session (sim_session_dump_start)")
          }
          if (text ~ /^[A-Za-z_].*[ *&]sim_(gpu|cuda)_[A-Za-z0-9_]+\(/ && text !~ /^static/) {
            named = text
            sub(/\(.*$/, "", named)
            sub(/^.*[ *&]/, "", named)
            if (ff == "cuda" && named ~ /^sim_gpu_/) {
              report(f, line, "prefix", named " declared in sim/cuda/: the CUDA backend " \
                     "names are sim_cuda_* (sim_gpu_* is the shared layer below it)")
            }
            if ((ff == "gpu" || ff == "cull" || ff == "nlist") && named ~ /^sim_cuda_/) {
              report(f, line, "prefix", named " declared in sim/" ff "/: the shared GPU " \
                     "layer names are sim_gpu_* (sim_cuda_* is the backend above it)")
            }
          }
          if (text !~ /^[ \t]*#[ \t]*include[ \t]*[<"]/) continue
          ++includes
          if (ff != "" && !(ff in rank) && !(ff in unplaced)) { # once, at its first include
            unplaced[ff] = 1
            report(f, line, "sim-order", "sim/" ff "/ has no place in SIM_ORDER " \
                   "(scripts/check_layers.sh): put it above the folders it uses")
          }
          spelled = text
          sub(/^[ \t]*#[ \t]*include[ \t]*/, "", spelled)
          quote = substr(spelled, 1, 1)
          spelled = substr(spelled, 2)
          sub(quote == "<" ? ">.*$" : "\".*$", "", spelled)
          shown = quote == "<" ? "<" spelled ">" : "\"" spelled "\""
          if (quote == "<") {
            if ((from == "sim" || from == "include") &&
                spelled ~ /^(GL|GLFW|GLES[0-9]*|EGL|cglm|epoxy)\//) {
              report(f, line, "sim->program", "#include " shown ": GL in the library (headless " \
                     "runs and bindings never touch a display)")
            }
            continue
          }
          target = resolve(f, spelled)
          if (target == "") continue
          to = layer(target)
          if ((from == "sim" || from == "include") && (to == "app" || to == "viewer" || \
              to == "render")) {
            report(f, line, "sim->program", "#include " shown " is " target ": the library " \
                   "knows nothing of app/, viewer/ or render/")
          }
          if (from != "sim" && from != "tests" && to == "sim") {
            report(f, line, "private-sim", "#include " shown " is " target ", private to the " \
                   "library: include its public face, include/nbsim/")
          }
          if (target ~ /^include\/nbsim\/internal\// && from != "sim" && from != "tests" &&
              f !~ /^app\/bench\// && f !~ /^include\/nbsim\/internal\//) {
            report(f, line, "internal", "#include " shown " is " target ": the backends and " \
                   "their hooks are for the library, its tests and nbsim bench (app/bench/)")
          }
          if (from == "render" && (to == "app" || to == "viewer")) {
            report(f, line, "render->program", "#include " shown " is " target ": render/ " \
                   "holds GL primitives and knows nothing of app/ or viewer/")
          }
          tf = folder(target)
          if (ff != "" && tf != "" && ff != tf && (ff in rank) && (tf in rank) &&
              rank[tf] > rank[ff]) {
            report(f, line, "sim-order", "#include " shown " is " target ": sim/" tf "/ is " \
                   "above sim/" ff "/ in SIM_ORDER (scripts/check_layers.sh)")
          }
          if (from == "viewer" && to == "app") {
            report(f, line, "viewer->app", "#include " shown " is " target ": the viewer takes " \
                   "what it needs from the program as arguments (viewer/viewer.h)")
          }
        }
        close(f)
        ++checked
      }
      fflush()
      if (violations > 0) {
        printf "check_layers: %d violation%s (rules: scripts/check_layers.sh, ARCHITECTURE.md)\n",
               violations, violations == 1 ? "" : "s" > "/dev/stderr"
        exit 1
      }
      printf "check_layers: ok, %d includes in %d files\n", includes, checked
    }'
}

# A scratch tree shaped like nbsim's, clean; then each kind of violation planted alone.
self_test() {
  local here scratch failed=0
  here=$(cd "$(dirname "$0")" && pwd)
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' RETURN
  mkdir -p "$scratch"/{include/nbsim/internal,app/bench,sim/core,sim/cull,sim/session,app/run,viewer,render,tests}
  printf '#include <stdint.h>\n' >"$scratch/sim/core/clock.h"
  printf '#include <stdint.h>\n' >"$scratch/include/nbsim/base.h"
  printf '#include "nbsim/base.h"\n' >"$scratch/include/nbsim/session.h"
  printf '#include "nbsim/base.h"\n' >"$scratch/sim/cull/cull.h"
  printf '#include "nbsim/session.h"\n#include "cull/cull.h"\nvoid f(void) { sim_backend_capture(0); }\n' \
    >"$scratch/sim/session/session.c"
  printf '#include "nbsim/session.h"\n' >"$scratch/app/run/options.h"
  printf '#include "nbsim/base.h"\n' >"$scratch/include/nbsim/internal/backend.h"
  printf '#include "nbsim/internal/backend.h"\n' >"$scratch/app/bench/bench.c"
  printf '#include "options.h"\n#include "viewer.h"\n#include "text.h"\n' >"$scratch/app/run/options.c"
  printf '#include "nbsim/session.h"\n#include <GLFW/glfw3.h>\n' >"$scratch/render/text.h"
  printf '#include "nbsim/session.h"\n#include "text.h"\n' >"$scratch/viewer/viewer.h"
  printf '#include "cull/cull.h"\n#include "options.h"\nvoid t(void) { sim_backend_capture(0); }\n' \
    >"$scratch/tests/test_x.c"
  local out
  if ! out=$("$here/check_layers.sh" "$scratch" 2>&1); then
    echo "check_layers self-test: the clean tree failed:" >&2
    echo "$out" >&2
    failed=1
  fi
  # file | text | the rule the line must name
  local cases=(
    'sim/core/bad.c|#include "viewer.h"|sim->program'
    'include/nbsim/bad.h|#include "../../app/run/options.h"|sim->program'
    'sim/core/gl.c|#include <GLFW/glfw3.h>|sim->program'
    'include/nbsim/private.h|#include "cull/cull.h"|private-sim'
    'app/run/bad.c|#include "../../sim/cull/cull.h"|private-sim'
    'viewer/bad.c|#include "session/session.c"|private-sim'
    'python/nbsim.c|#include "cull/cull.h"|private-sim'
    'render/bad.c|#include "viewer.h"|render->program'
    'render/bad2.c|#include "options.h"|render->program'
    'viewer/bad2.c|#include "options.h"|viewer->app'
    'app/run/dump.c|  sim_backend_capture(backend, &slot, err);|capture'
    'sim/core/up.c|#include "cull/cull.h"|sim-order'
    'sim/cull/up.h|#include "session/session.c"|sim-order'
    'sim/newfolder/x.c|#include "core/clock.h"|sim-order'
    'app/run/hook.c|#include "nbsim/internal/backend.h"|internal'
    'include/nbsim/open.h|#include "nbsim/internal/backend.h"|internal'
    'viewer/hook.c|#include "nbsim/internal/backend.h"|internal'
    'sim/cuda/k.cu|sim_status sim_gpu_thing(int n);|prefix'
    'sim/cull/k.h|void sim_cuda_other(void);|prefix'
  )
  local c file text rule
  for c in "${cases[@]}"; do
    IFS='|' read -r file text rule <<<"$c"
    mkdir -p "$scratch/$(dirname "$file")"
    printf '/* planted */\n%s\n' "$text" >"$scratch/$file"
    if out=$("$here/check_layers.sh" "$scratch" 2>&1); then
      echo "check_layers self-test: not caught: $file: $text" >&2
      failed=1
    elif ! grep -q "^$file:2: $rule: " <<<"$out"; then
      echo "check_layers self-test: $file: $text: expected a '$rule' line at $file:2, got:" >&2
      echo "$out" >&2
      failed=1
    fi
    rm "$scratch/$file"
  done
  if [ "$failed" -ne 0 ]; then
    return 1
  fi
  echo "check_layers self-test: ok, a clean tree passes and ${#cases[@]} planted violations fail"
}

case "${1:-}" in
  --self-test) self_test ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' ;;
  *) check "${1:-$(cd "$(dirname "$0")/.." && pwd)}" ;;
esac
