#!/usr/bin/env bash
# Prints the Python to build the virtual environments with: 3.12 (the Lambda runtime) when
# this machine has it, through pyenv or on PATH, else python3 (3.11 or newer).
set -eu
if command -v pyenv >/dev/null 2>&1; then
  prefix=$(pyenv prefix 3.12 2>/dev/null || true)
  if [ -n "$prefix" ] && [ -x "$prefix/bin/python3.12" ]; then echo "$prefix/bin/python3.12"; exit 0; fi
fi
for candidate in python3.12 python3; do
  if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    command -v "$candidate"; exit 0
  fi
done
echo "gligabao needs Python 3.11 or newer (3.12 preferred)" >&2
exit 1
