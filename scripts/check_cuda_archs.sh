#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks, without a GPU, that nbsim's device code builds for GPU families the build machine does
# not target (CI builds sm_90 only): every .cu file is compiled to PTX for each family (the
# device pass sees that family's __CUDA_ARCH__, with warnings as errors), and every kernel's
# launch bounds (.maxntid, .minnctapersm) are assembled by ptxas for it, in a stub of each entry
# with an empty body. A minimum block count the family's SM cannot hold (sim/gpu/arch.cuh: 1,536
# threads on RTX 30/40/50) fails here as it fails a user's build. The stubs keep ptxas to
# seconds: assembling the kernels' bodies for two more families would triple CI's build.
# Usage: scripts/check_cuda_archs.sh [ARCH...]   (default: 86 120; CI runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(86 120)
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mapfile -t sources < <(git ls-files '*.cu' 2>/dev/null || find sim app tests -name '*.cu')
flags=(-std=c++17 -Iinclude -Isim -Itests -DNBSIM_VERSION=\"check\" --Werror=all-warnings)

# One PTX file per (family, source): name "<arch>__<path with / as _>.ptx".
jobs=()
for a in "${archs[@]}"; do
  for s in "${sources[@]}"; do
    jobs+=("$a $s")
  done
done
compile() {
  local a=${1%% *} s=${1#* }
  local out="$2/${a}__${s//\//_}.ptx"
  if ! nvcc "${@:3}" -arch=compute_"$a" -ptx "$s" -o "$out" 2>"$out.log"; then
    echo "check_cuda_archs: $s does not compile for sm_$a:" >&2
    cat "$out.log" >&2
    return 1
  fi
}
export -f compile
printf '%s\n' "${jobs[@]}" |
  xargs -P "$(nproc)" -I{} bash -c 'compile "$@"' _ {} "$work" "${flags[@]}"

# The launch directives of every entry, with an empty body, assembled for its family (a stub per
# file: names with external linkage may repeat across files).
status=0
for a in "${archs[@]}"; do
  kernels=0
  for p in "$work/${a}__"*.ptx; do
    stub="${p%.ptx}.stub.ptx"
    awk '
      /^\.version|^\.target|^\.address_size/ { print; next }
      /\.entry / { name = $0; sub(/.*\.entry /, "", name); sub(/\(.*/, "", name); head = 1; d = ""; next }
      head && /^\.(maxntid|minnctapersm|maxnreg|reqntid)/ { d = d $0 "\n"; next }
      head && /^\{/ { printf ".visible .entry %s()\n%s{\n\tret;\n}\n", name, d; head = 0 }
    ' "$p" >"$stub"
    kernels=$((kernels + $(grep -c '\.entry' "$stub" || true)))
    if ! ptxas -arch=sm_"$a" --warning-as-error "$stub" -o "${stub%.ptx}.cubin" 2>"$stub.log"; then
      echo "check_cuda_archs: sm_$a, $(basename "${p#*__}" .ptx): launch bounds out of range:" >&2
      c++filt <"$stub.log" >&2
      status=1
    fi
  done
  echo "check_cuda_archs: sm_$a: ${#sources[@]} files compile; $kernels kernels' launch bounds checked"
done
exit $status
