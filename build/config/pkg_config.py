#!/usr/bin/python3
"""Prints a GN scope with the cflags, include dirs and libs that pkg-config
reports for the named packages. Used by //build/config/pkg_config.gni."""
import subprocess
import sys


def run(args):
    try:
        out = subprocess.run(["pkg-config"] + args, check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.stderr.write("pkg-config %s failed: %s\n" % (" ".join(args), e))
        sys.stderr.write("run ./dev setup to install the missing packages\n")
        sys.exit(1)
    return out.split()


def gn_list(items):
    return "[" + ", ".join('"%s"' % i.replace('"', '\\"') for i in items) + "]"


def main():
    pkgs = sys.argv[1:]
    cflags = run(["--cflags"] + pkgs)
    libs_flags = run(["--libs"] + pkgs)
    include_dirs = [f[2:] for f in cflags if f.startswith("-I")]
    other_cflags = [f for f in cflags if not f.startswith("-I")]
    libs = [f[2:] for f in libs_flags if f.startswith("-l")]
    lib_dirs = [f[2:] for f in libs_flags if f.startswith("-L")]
    ldflags = [f for f in libs_flags if not f.startswith(("-l", "-L"))]
    print("include_dirs = " + gn_list(include_dirs))
    print("cflags = " + gn_list(other_cflags))
    print("libs = " + gn_list(libs))
    print("lib_dirs = " + gn_list(lib_dirs))
    print("ldflags = " + gn_list(ldflags))


if __name__ == "__main__":
    main()
