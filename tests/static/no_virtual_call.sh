#!/bin/sh
# Usage: no_virtual_call.sh SOURCE COMPILER [ARGS...]
# Compiles SOURCE to assembly at -O2 and checks that the code of
# roster_probe_static and of dispatch_static holds no indirect call (a call
# through a vtable slot), while roster_probe_virtual, the control, holds one.
source=$1
shift
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$@" -std=c++20 -O2 -S -o "$tmp/probe.s" "$source" || exit 1
# Prints the bodies of the functions whose mangled names match $1.
bodies() {
  awk -v pat="$1" '
    /^[_A-Za-z$][_A-Za-z0-9.$]*:/ { name = substr($0, 1, length($0) - 1); inside = (name ~ pat) }
    inside { print }
    /^\t\.size\t/ { inside = 0 }' "$tmp/probe.s"
}
indirect='(call|jmp)q?[[:space:]]+\*'
bodies 'roster_probe_static|dispatch_static' >"$tmp/static.s"
bodies 'roster_probe_virtual' >"$tmp/virtual.s"
if ! grep -q 'roster_probe_static' "$tmp/static.s"; then echo "probe function not found in the assembly"; exit 1; fi
if ! grep -Eq "$indirect" "$tmp/virtual.s"; then
  echo "control: no indirect call found in a dispatch through roster::device&; the check is blind"; cat "$tmp/virtual.s"; exit 1
fi
if grep -Eq "$indirect" "$tmp/static.s"; then
  echo "static dispatch makes an indirect (virtual) call:"; grep -E "$indirect" "$tmp/static.s"; exit 1
fi
echo "static dispatch: $(grep -Ec '(call|jmp)q?[[:space:]]' "$tmp/static.s") calls and jumps, none indirect"
