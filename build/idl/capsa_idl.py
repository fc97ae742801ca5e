#!/usr/bin/python3
"""Generates the C bindings of one interface schema (build/capsa_interface.gni).

usage: capsa_idl.py IDLC ROOT SCHEMA SCHEMA_LABEL OUT_H OUT_C INCLUDE
Runs Debian's flatc on SCHEMA (include path ROOT) for its binary schema, then
IDLC (build/idl/capsa_idlc) on that; a schema flatc or capsa_idlc refuses
fails the build with their message.
"""
import os
import subprocess
import sys
import tempfile


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.stderr.write("%s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
        sys.exit(1)


def main():
    idlc, root, schema, label, out_h, out_c, include = sys.argv[1:8]
    idlc = os.path.abspath(idlc)
    with tempfile.TemporaryDirectory() as tmp:
        run(["/usr/bin/flatc", "--schema", "-b", "--bfbs-comments", "-I", root,
             "-o", tmp, schema])
        name = os.path.splitext(os.path.basename(schema))[0]
        # The tool may be built with AddressSanitizer (out/asan): its
        # leak check at exit is not the build's business.
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        run([idlc, os.path.join(tmp, name + ".bfbs"), label, out_h, out_c,
             include], env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
