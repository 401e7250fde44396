#!/usr/bin/env python3
"""json_equal.py A B [KEY...]: exit 0 when two JSON outputs of cxlsim are equal apart from the top-level
KEYs (default: wall_seconds, which measures the host, and command_line, which names the output files)."""
import json
import sys

a, b = (json.load(open(f)) for f in sys.argv[1:3])
for key in sys.argv[3:] or ["wall_seconds", "command_line"]:
    a.pop(key, None)
    b.pop(key, None)
sys.exit(0 if a == b else 1)
