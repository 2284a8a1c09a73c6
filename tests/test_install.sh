#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install` puts a working nbsim under a prefix: bin/nbsim with its viewer module beside
# it (when the build has one) and share/nbsim/plot.py, and the installed program runs a headless
# CPU run and `nbsim bench --help` from anywhere. Usage: test_install.sh CMAKE BUILD_DIR
set -u
cmake_cmd="$1"
build="$2"
nbsim="$build/bin/nbsim" # for cli_lib.sh's messages; the installed copy is tested below
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

prefix="$work/prefix"
"$cmake_cmd" --install "$build" --prefix "$prefix" >install.txt 2>&1 && ok || fail "cmake --install: $(cat install.txt)"
[ -x "$prefix/bin/nbsim" ] && ok || fail "no bin/nbsim"
[ -f "$prefix/share/nbsim/plot.py" ] && ok || fail "no share/nbsim/plot.py"
if [ -e "$build/bin/nbsim-viewer.so" ]; then
  [ -f "$prefix/bin/nbsim-viewer.so" ] && ok || fail "the viewer module is not beside the program"
fi
mkdir elsewhere && cd elsewhere || exit 1
PATH="$prefix/bin:$PATH" nbsim --frames 2 --backend cpu --n 100 --log t.csv --quiet >out.txt 2>err.txt \
  && [ "$(wc -l <t.csv)" -eq 3 ] && ok || fail "installed nbsim: $(cat err.txt)"
PATH="$prefix/bin:$PATH" nbsim bench --help >out.txt 2>&1 && grep -q "nbsim bench" out.txt && ok \
  || fail "installed nbsim bench --help: $(head -3 out.txt)"
PATH="$prefix/bin:$PATH" nbsim --version | grep -q "^nbsim [0-9]" && ok || fail "installed --version"

# The PATH advice after an install into ~/.local: "log in again" only where the login shell's
# startup file puts ~/.local/bin on PATH (Debian's skeleton ~/.profile), else the line to add
# (root's ~/.profile from base-files never adds it; bash reads ~/.bash_profile first).
advice="$here/../scripts/path_advice.sh"
debian_profile='if [ -d "$HOME/.local/bin" ] ; then
    PATH="$HOME/.local/bin:$PATH"
fi'
root_profile='if [ "$BASH" ]; then
  if [ -f ~/.bashrc ]; then
    . ~/.bashrc
  fi
fi
mesg n 2> /dev/null || true'
for who in debian root bash_profile on_path; do
  home="$work/home_$who"
  mkdir -p "$home"
  case $who in
    debian|on_path) printf '%s\n' "$debian_profile" >"$home/.profile" ;;
    root) printf '%s\n' "$root_profile" >"$home/.profile" ;;
    bash_profile) printf '%s\n' "$debian_profile" >"$home/.profile"; echo '. ~/.bashrc' >"$home/.bash_profile" ;;
  esac
  path=/usr/bin:/bin
  [ $who = on_path ] && path="$home/.local/bin:$path"
  HOME="$home" SHELL=/bin/bash PATH="$path" bash "$advice" "$home/.local" >advice.txt 2>&1
  case $who in
    debian) grep -q "log in again (~/.profile adds it" advice.txt ;;
    root) grep -q "logging in again will not put it there (~/.profile does not add it.*add this line to ~/.profile.*export PATH=\"\$HOME/.local/bin:\$PATH\"" advice.txt \
            && ! grep -q "log in again (" advice.txt ;;
    bash_profile) grep -q "~/.bash_profile does not add it.*add this line to ~/.bash_profile" advice.txt ;;
    on_path) [ ! -s advice.txt ] ;;
  esac && [ "$(wc -l <advice.txt)" -le 1 ] && ok || fail "PATH advice for $who: $(cat advice.txt)"
done

finish
