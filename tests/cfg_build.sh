#!/bin/sh
# Build and run the cfg test suite without CMake.
#   tests/cfg_build.sh            ASan + UBSan build, then run
#   tests/cfg_build.sh valgrind   plain build, then run under valgrind (sanitizers and valgrind do not mix)
# The binary goes to ${TMPDIR:-/tmp}; the exit status is the number of failed tests (or the build's).
set -eu
cd "$(dirname "$0")/.."
out="${TMPDIR:-/tmp}/cxlsim_test_cfg"
src="host/util/err.c host/config/cfg.c tests/test_cfg.c"
if [ "${1:-}" = valgrind ]; then
    gcc -std=c11 -Wall -Wextra -Werror -g -O1 $src -lyaml -lcmocka -o "$out.vg"
    exec valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
        --track-fds=yes "$out.vg"
fi
gcc -std=c11 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all -g \
    $src -lyaml -lcmocka -o "$out"
exec "$out"
