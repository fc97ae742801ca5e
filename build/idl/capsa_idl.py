#!/usr/bin/python3
"""Generates the C bindings of one interface schema (build/capsa_interface.gni).

usage: capsa_idl.py IDLC ROOT SCHEMA SCHEMA_LABEL OUT_H OUT_C INCLUDE
Runs Debian's flatc on SCHEMA (include path ROOT) for its binary schema, then
IDLC (build/idl/capsa_idlc) on that; a schema flatc or capsa_idlc refuses
fails the build with their message.
"""
import difflib
import os
import re
import subprocess
import sys
import tempfile


# The attributes ipc/interface/capsa_attributes.fbs declares (flatc refuses
# any other before capsa_idlc sees the schema), read from ROOT.
def attributes(root):
    try:
        with open(os.path.join(root, "ipc/interface/capsa_attributes.fbs")) as f:
            return re.findall(r'^attribute "(\w+)";', f.read(), re.M)
    except OSError:
        return []


UNDECLARED = re.compile(r"attributes must be declared before use: (\w+)")


def hint(output, known):
    """What to write instead, for the flatc errors a capsa schema meets."""
    m = UNDECLARED.search(output)
    if not m:
        return ""
    name = m.group(1)
    if name in known:
        return ("capsa-idl: %s is capsa's: add `include "
                "\"ipc/interface/capsa_attributes.fbs\";` as the schema's "
                "first line (it declares every capsa_ attribute)\n" % name)
    close = difflib.get_close_matches(name, known, n=1)
    return ("capsa-idl: %s is no capsa attribute%s: the attributes are %s "
            "(ipc/interface/capsa_attributes.fbs)\n" %
            (name, " (did you mean %s?)" % close[0] if close else "",
             ", ".join(known)))


def run(cmd, env=None, known=()):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except FileNotFoundError:
        sys.stderr.write("capsa-idl: %s not found: install it (Debian "
                         "package flatbuffers-compiler; ./dev setup installs "
                         "it)\n" % cmd[0])
        sys.exit(1)
    if r.returncode != 0:
        out = r.stdout + r.stderr
        sys.stderr.write("%s\n%s%s" % (" ".join(cmd), out, hint(out, known)))
        sys.exit(1)


def main():
    idlc, root, schema, label, out_h, out_c, include = sys.argv[1:8]
    idlc = os.path.abspath(idlc)
    with tempfile.TemporaryDirectory() as tmp:
        run(["/usr/bin/flatc", "--schema", "-b", "--bfbs-comments", "-I", root,
             "-o", tmp, schema], known=attributes(root))
        name = os.path.splitext(os.path.basename(schema))[0]
        # The tool may be built with AddressSanitizer (out/asan): its
        # leak check at exit is not the build's business.
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        run([idlc, os.path.join(tmp, name + ".bfbs"), label, out_h, out_c,
             include], env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
