#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Measurements live in bench/results/, reasons live in comments (STYLE.md): the library's text
# (sim/ and include/, comments and code alike) names no GPU model, quotes no measured time and no
# run's name. A comment gives the reason and links the file that holds the numbers,
# bench/results/<gpu>/<file>. No build, a fraction of a second. One line per offending line,
# "FILE:LINE: RULES: what", and exit 1.
#
#   gpu-model  a GPU model's name: H100, H200, H20, H800, A100, A800, A30, A40, L40(S), V100,
#              P100, P40, K80, M60, B100, B200, GH200, GB200, RTX/GTX nnnn (4 digits). A number
#              measured on one card is stale on the next; say what about the hardware matters
#              (an SM's lanes, compute capability 9.0, the bandwidth) and link the results folder.
#              Two-character names (T4, L4, A10) are left out: they read as T2(n), T3(n) do.
#              The results folders' lower-case names (bench/results/nvidia-h100/) are the links.
#   timing     a figure with a unit of wall-clock time: "0.28 ms", "~4.5 us", "17.5µs", "230 ns",
#              "3 milliseconds", and seconds as a rate, "~1 s per step", "0.25 s a frame": a
#              measurement, stale the day the next kernel lands. Say the reason (what the time
#              goes into, which is faster, the ratio) and link the measurement.
#   run-name   "run F1", "runs P1 and P2": a benchmark session's label means something only in
#              the results file that defines it; link the file.
#
# What is not a measurement, and passes:
#   * a design constant, a value the code chooses: its unit in brackets, the house's notation for
#     units (`[J]`, `[N/m]`): "SIM_STEP_SLICE_MS [ms] ... 100 [ms]", "polling every 50 [ms]",
#     "a budget of 10 [ms] a step". Brackets say "chosen", a bare "10 ms" says "measured": do not
#     bracket a measurement to pass.
#   * simulated (physical) time, in seconds, the model's unit (scene.h): "a step of 0.5 s", "the
#     cone settles within ~5 s". Seconds are flagged only as a rate ("s per step", "s a frame"),
#     the way wall-clock costs are quoted: write a time step as "a step of 2e-4 s".
#   * names: a figure inside an identifier (pause_50ms, SIM_STEP_SLICE_MS) and printf formats
#     ("%.3f ms") carry no number.
# One line at a time: a figure whose unit wraps onto the next line is not seen (review catches it).
#
# Usage: scripts/check_comments.sh [ROOT]      check sim/ and include/ of the tree at ROOT
#                                              (default: this repository)
#        scripts/check_comments.sh --self-test plant each kind of violation in a scratch tree
#                                              and check that each is caught, and a clean tree
#                                              passes
set -euo pipefail

check() {
  local root=$1
  cd "$root"
  local files dirs=()
  for d in sim include; do [ -d "$d" ] && dirs+=("$d"); done
  if [ ${#dirs[@]} -eq 0 ]; then
    echo "check_comments: no sim/ or include/ under $root" >&2
    return 1
  fi
  files=$(find "${dirs[@]}" -type f | LC_ALL=C sort)
  # mawk (Debian's awk) has no {n} intervals: the digits are spelled out.
  printf '%s\n' "$files" | LC_ALL=C awk '
    # The first match of re in s, "" when none; the surrounding character classes trimmed.
    function first(s, re,    m) {
      if (!match(s, re)) return ""
      m = substr(s, RSTART, RLENGTH)
      sub(/^[^A-Za-z0-9~]/, "", m)
      sub(/[^A-Za-z0-9.µ]$/, "", m)
      return m
    }
    BEGIN {
      b = "(^|[^A-Za-z0-9_])"      # no letter, digit or _ before: not inside an identifier
      e = "([^A-Za-z0-9_]|$)"      # nor after
      d4 = "[0-9][0-9][0-9][0-9]"
      gpu = b "(GH200|GB200|H100|H200|H20|H800|A100|A800|A30|A40|L40S?|V100|P100|P40|K80|M60|" \
            "B100|B200|(RTX|GTX) ?(PRO ?)?A?" d4 ")s?" e
      num = "[0-9][0-9.,]*"
      unit = "(ns|us|µs|ms|nanoseconds?|microseconds?|milliseconds?)"
      timing = "(^|[^A-Za-z0-9_.])~?" num " ?" unit e
      rate = "(^|[^A-Za-z0-9_.])~?" num " ?(s|seconds?) (per|a|an|each) (step|frame|call|launch)" e
      runname = "(^|[^A-Za-z])[Rr]uns? [A-Z][0-9]+" e
    }
    {
      f = $0
      if (f == "") next
      line = 0
      while ((getline text < f) > 0) {
        ++line
        what = ""
        m = first(text, gpu)
        if (m != "") what = what "; gpu-model: \"" m "\": link bench/results/<gpu>/<file>"
        m = first(text, timing)
        if (m == "") m = first(text, rate)
        if (m != "") what = what "; timing: \"" m "\": measured? link bench/results/; chosen? " \
                            "\"100 [ms]\""
        m = first(text, runname)
        if (m != "") what = what "; run-name: \"" m "\": link the results file that defines it"
        if (what != "") {
          printf "%s:%d: %s\n", f, line, substr(what, 3)
          ++violations
        }
      }
      close(f)
      lines += line
      ++checked
    }
    END {
      fflush()
      if (violations > 0) {
        printf "check_comments: %d offending line%s (rules: scripts/check_comments.sh --help)\n",
               violations, violations == 1 ? "" : "s" > "/dev/stderr"
        exit 1
      }
      printf "check_comments: ok, %d lines in %d files of sim/ and include/\n", lines, checked
    }'
}

# A scratch tree with sim/ and include/, clean (with every form the rules let pass); then each
# kind of violation planted alone.
self_test() {
  local here scratch failed=0
  here=$(cd "$(dirname "$0")" && pwd)
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' RETURN
  mkdir -p "$scratch"/{include/nbsim,sim/core,sim/cuda,sim/step,app}
  cat >"$scratch/sim/step/stepper.h" <<'EOF'
/* SIM_STEP_SLICE_MS [ms]: the work between two reads of the stop flag. 100 [ms]: far above the
 * few microseconds a slice costs. Measured: bench/results/nvidia-h100/step_graphs.md. */
#define SIM_STEP_SLICE_MS 100.0
EOF
  cat >"$scratch/sim/core/dist.c" <<'EOF'
/* polling every 50 [ms]; a step of 0.5 s (simulated); the cone settles within ~5 s; one run */
static void pause_50ms(void) { printf("%.3f ms per step, %g s\n", ms, s); }
/* F1 = dE/da, T2(n) tile pairs, L1 57 %, sm_90, the RTX 30, 40 and 50 series, 2e-4 s */
EOF
  cat >"$scratch/sim/cuda/kernel.cu" <<'EOF'
/* Bytes per block from L2: 2 * 16 * TILE; compute capability 9.0 holds 2,048 threads an SM;
 * a quarter fewer steps (bench/results/nvidia-h200/nlist.md, "Half against full lists"). */
EOF
  printf '/* the results folders: bench/results/nvidia-h100/, nvidia-h200/ */\n' \
    >"$scratch/include/nbsim/base.h"
  printf '/* measured on an H100: 0.28 ms (not the library: not checked) */\n' >"$scratch/app/x.c"
  local out
  if ! out=$("$here/check_comments.sh" "$scratch" 2>&1); then
    echo "check_comments self-test: the clean tree failed:" >&2
    echo "$out" >&2
    failed=1
  fi
  # file | text | the rule the line must name
  local cases=(
    'sim/cuda/a.cu| * (ncu, H100: 17.5 us) |gpu-model'
    'include/nbsim/b.h|/* a gas on 4 H100s */|gpu-model'
    'sim/core/c.c|/* H200 */|gpu-model'
    'sim/core/d.c| * A100: 64 lanes|gpu-model'
    'sim/core/e.c| * an RTX 4090 holds|gpu-model'
    'sim/core/f.c| * on a GH200,|gpu-model'
    'sim/core/g.c| * took 0.28 ms per contact step|timing'
    'sim/core/h.c| * each costs the host ~4.5 us to enqueue|timing'
    'sim/core/i.c| * the drift (17.5µs)|timing'
    'include/nbsim/j.h| * printf costs ~230 ns a number|timing'
    'sim/core/k.c| * about 3 milliseconds|timing'
    'sim/core/l.c| * ~1 s per step at 4,096 on two CPU cores|timing'
    'sim/core/m.c| * 0.25 s a frame, formatting and writing|timing'
    'sim/core/n.c|    notice("0.75 ms on 4 GPUs, 0.48 on one");|timing'
    'sim/core/o.c| * 0.0313 ms (run F1 of cells_once.md)|run-name'
    'sim/core/p.c| * (cells_once.md, runs P1 and P2)|run-name'
  )
  local c file text rule
  for c in "${cases[@]}"; do
    IFS='|' read -r file text rule <<<"$c"
    mkdir -p "$scratch/$(dirname "$file")"
    printf '/* planted */\n%s\n' "$text" >"$scratch/$file"
    if out=$("$here/check_comments.sh" "$scratch" 2>&1); then
      echo "check_comments self-test: not caught: $file: $text" >&2
      failed=1
    elif ! grep -q "^$file:2: .*$rule: " <<<"$out"; then
      echo "check_comments self-test: $file: $text: expected a '$rule' line at $file:2, got:" >&2
      echo "$out" >&2
      failed=1
    elif [ "$(grep -c "^$file:" <<<"$out")" -ne 1 ]; then
      echo "check_comments self-test: $file: $text: expected one line, got:" >&2
      echo "$out" >&2
      failed=1
    fi
    rm "$scratch/$file"
  done
  if [ "$failed" -ne 0 ]; then
    return 1
  fi
  echo "check_comments self-test: ok, a clean tree passes and ${#cases[@]} planted violations fail"
}

case "${1:-}" in
  --self-test) self_test ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' ;;
  *) check "${1:-$(cd "$(dirname "$0")/.." && pwd)}" ;;
esac
