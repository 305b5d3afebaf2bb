#!/usr/bin/env bash
# Builds the static binary and edits a sample copy, printing the result lines.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/common.sh
scripts/build-static.sh x86_64-unknown-linux-musl
bin="$PWD/dist/as-edit-$(pkg_version)-x86_64-unknown-linux-musl"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'def greet(name):\r\n    return "Hello, " + name\r\n' > "$work/sample.py"
b64() { printf '%s' "$1" | base64 -w0; }
echo
echo "sample.py before:"; cat -A "$work/sample.py"
echo
echo "Replace '\"Hello, \" + name' with 'f\"Hello, {name}!\"' (base64 on the wire, through sh -c, as a host sends it):"
sh -c "'$bin' -- '$work/sample.py' '$(b64 '"Hello, " + name')' '$(b64 'f"Hello, {name}!"')' false" || true
echo
echo "sample.py after (CRLF normalized to LF):"; cat -A "$work/sample.py"
echo
echo "A second, now ambiguous edit is refused and changes nothing:"
printf 'x = 1\nx = 1\n' >> "$work/sample.py"
sh -c "'$bin' -- '$work/sample.py' '$(b64 'x = 1')' '$(b64 'x = 2')'" || echo "(exit $?)"
echo
echo "With --hints the refusal says where the occurrences start; --at-line picks one:"
sh -c "'$bin' --hints -- '$work/sample.py' '$(b64 'x = 1')' '$(b64 'x = 2')'" || echo "(exit $?)"
sh -c "'$bin' --at-line 4 -- '$work/sample.py' '$(b64 'x = 1')' '$(b64 'x = 2')'"
echo
echo "A near miss (a doubled space) is refused with the file's exact text to send next:"
sh -c "'$bin' --hints -- '$work/sample.py' '$(b64 'return  f"Hello, {name}!"')' '$(b64 'return f"Hi, {name}!"')'" || echo "(exit $?)"
echo
echo "sample.py now:"; cat -A "$work/sample.py"
