"""Stages what a test binary needs at run time where uid 65534 can reach it.

The list is gn's: every capsa_test writes OUT/NAME.runtime_deps
(build/capsa_test.gni), the binary itself first, then its data_deps (build
products) and data (source files and directories), relative to OUT. The
copy keeps their places relative to one another (DEST/out/default/capsa,
DEST/demos/page/samples/page.md), so a test that finds its files from its own
binary (tests/harness/paths.h) finds the copies.

Used by tests/run_tests.py for the uid 65534 pass: a checkout under a 0700
home or a `mktemp -d` directory is out of that user's reach, and running from
the copy everywhere makes that pass the same wherever the checkout lives.
"""
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def runtime_deps(out_dir, name):
    """Absolute paths of what OUT_DIR/NAME needs at run time. Raises OSError
    when gn wrote no list (a build directory from before the list)."""
    path = os.path.join(out_dir, name + ".runtime_deps")
    with open(path) as f:
        rels = [l.rstrip("\n") for l in f if l.strip()]
    return [os.path.normpath(os.path.join(os.path.abspath(out_dir), r))
            for r in rels]


class Stage:
    """One staging directory per build directory: DEST mirrors the files of
    the binaries staged into it below the deepest directory that holds both
    the checkout and the build directory (the checkout itself for out/X)."""

    def __init__(self, out_dir, dest):
        self.out_dir = os.path.abspath(out_dir)
        self.dest = dest
        self.base = os.path.commonpath([ROOT, self.out_dir])
        self.staged = set()
        self.missing = []  # (path, binary name): listed, not built or absent

    def _place(self, path):
        return os.path.join(self.dest, os.path.relpath(path, self.base))

    def out_dir_copy(self):
        return self._place(self.out_dir)

    def add(self, name):
        """Copies NAME's runtime deps; returns the staged binary's path.
        Raises OSError when the list cannot be read or a copy fails."""
        deps = runtime_deps(self.out_dir, name)
        for p in deps:
            if os.path.commonpath([self.base, p]) != self.base:
                raise OSError("%s.runtime_deps lists %s, outside %s" %
                              (name, p, self.base))
        for p in deps:
            if p in self.staged:
                continue
            if not os.path.exists(p):
                self.missing.append((p, name))
                continue
            self._copy(p, self._place(p))
            self.staged.add(p)
        return self._place(os.path.join(self.out_dir, name))

    def _copy(self, src, dst):
        parent = os.path.dirname(dst)
        self._mkdirs(parent)
        if os.path.isdir(src):
            self._mkdirs(dst)
            for entry in sorted(os.listdir(src)):
                self._copy(os.path.join(src, entry), os.path.join(dst, entry))
            return
        shutil.copyfile(src, dst)
        # Readable by all; executable by all when it was by its owner. The
        # original's mode is not copied: a umask 077 checkout has 0600 files.
        mode = 0o755 if os.stat(src).st_mode & 0o100 else 0o644
        os.chmod(dst, mode)

    def _mkdirs(self, d):
        if os.path.isdir(d):
            return
        self._mkdirs(os.path.dirname(d))
        os.mkdir(d)
        os.chmod(d, 0o755)


# Run as the unprivileged user: every directory searchable and listable,
# every file readable, every file with an execute bit executable.
_CHECK = r"""
import os, stat, sys
bad = []
def err(e):
    bad.append("%s: %s" % (e.filename, e.strerror))
top = sys.argv[1]
if not os.access(top, os.R_OK | os.X_OK):
    bad.append("%s: not reachable (a parent directory not searchable?)" % top)
for d, dirs, files in os.walk(top, onerror=err):
    for f in files:
        p = os.path.join(d, f)
        want = os.R_OK
        if os.stat(p).st_mode & stat.S_IXUSR:
            want |= os.X_OK
        if not os.access(p, want):
            bad.append("%s: not %s" % (p, "executable" if want & os.X_OK
                                           else "readable"))
print("\n".join(bad))
sys.exit(1 if bad else 0)
"""


def unreachable_as(uid, gid, top):
    """What uid/gid cannot read or run under TOP (empty when all is well)."""
    p = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid,
                        "--clear-groups", sys.executable, "-c", _CHECK, top],
                       capture_output=True, text=True, errors="replace",
                       stdin=subprocess.DEVNULL, timeout=120)
    if p.returncode == 0:
        return []
    lines = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
    return lines or ["the check exited %d" % p.returncode]
