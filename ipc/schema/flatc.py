#!/usr/bin/python3
"""Runs Debian's flatc on one schema for the GN action in ipc/BUILD.gn.

usage: flatc.py SCHEMA OUT_DIR
Writes OUT_DIR/<schema name>_generated.h (C++, no exceptions or RTTI needed).
"""
import subprocess
import sys


def main():
    schema, out_dir = sys.argv[1], sys.argv[2]
    cmd = ["/usr/bin/flatc", "--cpp", "--scoped-enums", "-o", out_dir, schema]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("flatc failed: %s\n%s%s" % (" ".join(cmd), r.stdout,
                                                     r.stderr))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
