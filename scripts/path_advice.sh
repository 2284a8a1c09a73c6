#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a user must do so that `nbsim` is found after setup.sh installed it into PREFIX/bin: one
# line (for stderr), or nothing when PREFIX/bin is on PATH already. Login shells put ~/.local/bin
# on PATH only if the startup file they read says so: Debian's skeleton ~/.profile does (when the
# folder exists), root's ~/.profile (from base-files) never does, and bash reads ~/.bash_profile
# or ~/.bash_login instead of ~/.profile when either exists. So "log in again" is said only when
# that file mentions the folder; otherwise the line to add to it.
# Usage: path_advice.sh PREFIX
set -u
prefix="$1"
case ":$PATH:" in
  *":$prefix/bin:"*) exit 0 ;;
esac
export_line="export PATH=\"$prefix/bin:\$PATH\""
if [ "$prefix" = "$HOME/.local" ]; then
  # shellcheck disable=SC2016 # the line as the user types it, $HOME and $PATH unexpanded
  export_line='export PATH="$HOME/.local/bin:$PATH"'
fi
# The startup file a login shell reads: bash's first of these, sh's ~/.profile.
login_file="$HOME/.profile"
case "${SHELL:-}" in
  */bash)
    for f in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do
      [ -e "$f" ] && { login_file=$f; break; }
    done ;;
esac
shown=${login_file/#$HOME/\~}
if [ "$prefix" = "$HOME/.local" ] && [ -f "$login_file" ] && grep -q '\.local/bin' "$login_file"; then
  echo "nbsim setup: installed $prefix/bin/nbsim; that folder is not on your PATH yet: log in" \
       "again ($shown adds it when it exists) or run: $export_line"
else
  why="$shown does not add it"
  [ "$(id -u)" -eq 0 ] && [ "$prefix" = "$HOME/.local" ] && [ "$login_file" = "$HOME/.profile" ] \
    && why="$why, as root's never does"
  [ -e "$login_file" ] || why="there is no $shown"
  echo "nbsim setup: installed $prefix/bin/nbsim; that folder is not on your PATH and logging in" \
       "again will not put it there ($why): add this line to $shown, and run it now for this" \
       "shell: $export_line"
fi
