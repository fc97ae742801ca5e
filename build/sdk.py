#!/usr/bin/python3
"""capsa's SDK: which headers are installed under which name, and which
symbols libcapsa.so exports.

In the tree, headers are included from the repository root
("host/capsa_host.h"); an embedder gets them as <capsa/host.h>. HEADERS is
the whole public surface: every header an embedder can include, and nothing
else (no capsa__ internals, no zygote, codec or channel-core headers).

  sdk.py list | sources
      the installed names / the repository headers, one a line (read by GN
      at gen time)
  sdk.py headers --root DIR --out DIR --stamp FILE
      writes OUT/capsa/... : each public header with its includes of other
      public headers rewritten to <capsa/...>, plus the umbrella capsa.h.
      Fails when a public header includes a repository header that is not
      public: the installed tree must compile on its own.
  sdk.py symbols --root DIR --archive libcapsa.a --map build/libcapsa.map
                 --stamp FILE [--write]
      the symbols libcapsa.so exports are the archive's global definitions
      that the public headers name (in code or macros, not comments); fails
      unless the map's `global:` list is exactly that set (--write rewrites
      the map), so a public function cannot be added or dropped without the
      ABI record (the map) saying so. A capsa__ internal named by a public
      header also fails.
"""
import argparse
import os
import re
import subprocess
import sys

# Repository header -> installed name under include/.
HEADERS = {
    "host/capsa_host.h": "capsa/host.h",
    "host/capsa_pool.h": "capsa/pool.h",
    "host/capsa_text.h": "capsa/text_escape.h",
    "host/kind_registry.h": "capsa/kind_registry.h",
    "host/version.h": "capsa/version.h",
    "renderer/runtime.h": "capsa/renderer.h",
    "ipc/message.h": "capsa/message.h",
    "ipc/interface.h": "capsa/interface.h",
    "ipc/fuzz.h": "capsa/fuzz.h",
    "host/fuzz/capsa_fuzz_live.h": "capsa/fuzz_live.h",
    "ipc/uv_channel.h": "capsa/channel.h",
    "ipc/loop.h": "capsa/channel_loop.h",
    "ipc/fastpath.h": "capsa/fastpath.h",
    "ipc/validate.h": "capsa/validate.h",
    "ipc/shm.h": "capsa/shm.h",
    "ipc/frames.h": "capsa/frames.h",
    "ipc/data_pipe.h": "capsa/data_pipe.h",
    "sandbox/capmode/capmode.h": "capsa/capmode.h",
    "sandbox/errors.h": "capsa/errors.h",
    "sandbox/launcher/namespaces.h": "capsa/namespaces.h",
    "sandbox/rights/rights.h": "capsa/rights.h",
    "sandbox/procdesc.h": "capsa/procdesc.h",
    "sandbox/memfd.h": "capsa/memfd.h",
    # FreeBSD's names: pkg-config puts include/capsa/compat on the include
    # path, so FreeBSD code's <sys/capsicum.h> compiles unchanged. Not in
    # the umbrella: <sys/capsicum.h> maps close/dup/fcntl to capsa's.
    "sandbox/compat/include/sys/capsicum.h": "capsa/compat/sys/capsicum.h",
    "sandbox/compat/include/sys/procdesc.h": "capsa/compat/sys/procdesc.h",
}
UMBRELLA = "capsa/capsa.h"

INCLUDE_RE = re.compile(r'#include "([^"]+)"')


def installed_names():
    return sorted(list(HEADERS.values()) + [UMBRELLA])


def rewrite(src, text):
    """The header as installed: "repo/path.h" includes become <capsa/...>
    (in code and in the usage comments alike)."""
    def sub(m):
        name = HEADERS.get(m.group(1))
        if name is None:
            return m.group(0)
        if name.startswith("capsa/compat/"):
            name = name[len("capsa/compat/"):]
        return "#include <%s>" % name
    out = INCLUDE_RE.sub(sub, text)
    for line in out.splitlines():
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            sys.exit("sdk.py: public header %s includes \"%s\", which is not "
                     "installed: make it public in build/sdk.py HEADERS or "
                     "drop the include" % (src, m.group(1)))
    return ("// Installed by capsa's SDK from %s; see <capsa/capsa.h>.\n" % src
            + out)


def umbrella():
    lines = [
        "// capsa: FreeBSD Capsicum's capability mode and sandboxed renderers",
        "// on Linux. The whole embedding API in one include:",
        "//",
        "//   #include <capsa/capsa.h>",
        "//   cc prog.c $(pkg-config --cflags --libs capsa)",
        "//",
        "// FreeBSD's own API is <sys/capsicum.h> and <sys/procdesc.h> (on the",
        "// include path by pkg-config); it is not included here because it",
        "// maps close, dup and fcntl to capsa's rights-aware versions.",
        "#ifndef CAPSA_CAPSA_H_",
        "#define CAPSA_CAPSA_H_",
        "",
    ]
    for name in sorted(HEADERS.values()):
        if not name.startswith("capsa/compat/"):
            lines.append("#include <%s>" % name)
    lines += ["", "#endif  // CAPSA_CAPSA_H_", ""]
    return "\n".join(lines)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if old != text:  # keep mtimes: dependents rebuild only on a change
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)


def cmd_headers(a):
    for src, name in sorted(HEADERS.items()):
        with open(os.path.join(a.root, src)) as f:
            write(os.path.join(a.out, name), rewrite(src, f.read()))
    write(os.path.join(a.out, UMBRELLA), umbrella())
    with open(a.stamp, "w"):
        pass


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(\\.|[^"\\])*"', " ", text)


def header_identifiers(root):
    ids = set()
    for src in HEADERS:
        with open(os.path.join(root, src)) as f:
            ids |= set(re.findall(r"[A-Za-z_]\w*",
                                  strip_comments_and_strings(f.read())))
    return ids


def archive_definitions(archive):
    out = subprocess.run(["nm", "-g", "--defined-only", archive], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms.add(parts[2])
    return syms


def read_map(path):
    with open(path) as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    m = re.search(r"global:(.*?)local:", text, flags=re.S)
    if not m:
        sys.exit("sdk.py: %s has no global:/local: section" % path)
    return {s.strip() for s in m.group(1).split(";") if s.strip()}


MAP_HEAD = """\
/* libcapsa.so's ABI: the symbols it exports, under the version node
 * CAPSA_0.1 (soname libcapsa.so.0). Checked by build/sdk.py against the
 * public headers at every build: a function declared in an installed header
 * is listed here, and nothing else is (no capsa__ internal, no C++).
 *
 * ABI policy (docs/sdk.md): the soname's 0 changes when an exported
 * function's signature or a public struct's layout or an enum value
 * changes; a release that only adds functions adds them in a new node
 * (CAPSA_0.2 { global: ...; } CAPSA_0.1;) and keeps this one as it is.
 * Regenerate the list with build/sdk.py symbols --write. */
"""


def cmd_symbols(a):
    ids = header_identifiers(a.root)
    defs = archive_definitions(a.archive)
    public = ids & defs
    internal = sorted(s for s in public if s.startswith("capsa__"))
    if internal:
        sys.exit("sdk.py: public headers name internal symbols: %s"
                 % " ".join(internal))
    if a.write:
        with open(a.map, "w") as f:
            f.write(MAP_HEAD + "CAPSA_0.1 {\n  global:\n")
            for s in sorted(public):
                f.write("    %s;\n" % s)
            f.write("  local:\n    *;\n};\n")
    listed = read_map(a.map)
    missing, extra = sorted(public - listed), sorted(listed - public)
    if missing or extra:
        msg = ["sdk.py: %s disagrees with the public headers" % a.map]
        if missing:
            msg.append("  declared in an SDK header, defined, not exported: "
                       + " ".join(missing))
        if extra:
            msg.append("  exported but not defined or not in an SDK header: "
                       + " ".join(extra))
        msg.append("  (a deliberate ABI change: build/sdk.py symbols --write)")
        sys.exit("\n".join(msg))
    with open(a.stamp, "w"):
        pass


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    sub.add_parser("sources")
    h = sub.add_parser("headers")
    h.add_argument("--root", required=True)
    h.add_argument("--out", required=True)
    h.add_argument("--stamp", required=True)
    s = sub.add_parser("symbols")
    s.add_argument("--root", required=True)
    s.add_argument("--archive", required=True)
    s.add_argument("--map", required=True)
    s.add_argument("--stamp", required=True)
    s.add_argument("--write", action="store_true")
    a = ap.parse_args()
    if a.cmd == "list":
        print("\n".join(installed_names()))
    elif a.cmd == "sources":
        print("\n".join(sorted(HEADERS)))
    elif a.cmd == "headers":
        cmd_headers(a)
    else:
        cmd_symbols(a)


if __name__ == "__main__":
    main()
