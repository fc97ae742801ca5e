#!/usr/bin/python3
"""Loads a container runtime's seccomp profile (the JSON format of
containers-common's /usr/share/containers/seccomp.json, which Podman, CRI-O
and Buildah apply by default), then execs a program under it, as a runtime
does for a container's entrypoint.

usage: seccomp_exec.py PROFILE CAPS -- PROGRAM [ARG...]
CAPS: the capability names the container keeps (comma separated, e.g.
CAP_CHOWN,CAP_KILL): rules whose "includes" list capabilities not all kept,
or whose "excludes" name a kept one, are left out, as the runtime does.

The filter is loaded without setting no_new_privs when the caller may
(CAP_SYS_ADMIN), as runtimes do before they drop capabilities; the program
(setpriv) then drops them. Uses libseccomp through ctypes: nothing to build.
"""
import ctypes
import ctypes.util
import json
import os
import platform
import sys

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_FLTATR_CTL_NNP = 3
OPS = {"SCMP_CMP_NE": 1, "SCMP_CMP_LT": 2, "SCMP_CMP_LE": 3, "SCMP_CMP_EQ": 4,
       "SCMP_CMP_GE": 5, "SCMP_CMP_GT": 6, "SCMP_CMP_MASKED_EQ": 7}
ARCH = {"x86_64": "SCMP_ARCH_X86_64", "aarch64": "SCMP_ARCH_AARCH64"}


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def action(name, errno_ret):
    if name == "SCMP_ACT_ALLOW":
        return SCMP_ACT_ALLOW
    if name == "SCMP_ACT_ERRNO":
        return 0x00050000 | (errno_ret & 0xFFFF)
    raise SystemExit("seccomp_exec: action %s not supported" % name)


def kernel_at_least(v):
    have = [int(x) for x in platform.release().split("-")[0].split(".")[:2]]
    want = [int(x) for x in v.split(".")[:2]]
    return have >= want


def applies(rule, caps, arch):
    inc, exc = rule.get("includes") or {}, rule.get("excludes") or {}
    if inc.get("caps") and not set(inc["caps"]) <= caps:
        return False
    if inc.get("arches") and arch not in inc["arches"]:
        return False
    if inc.get("minKernel") and not kernel_at_least(inc["minKernel"]):
        return False
    if exc.get("caps") and set(exc["caps"]) & caps:
        return False
    if exc.get("arches") and arch in exc["arches"]:
        return False
    return True


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        raise SystemExit(__doc__)
    profile = json.load(open(sys.argv[1]))
    caps = set(c for c in sys.argv[2].split(",") if c)
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), "")
    lib = ctypes.CDLL(ctypes.util.find_library("seccomp") or "libseccomp.so.2",
                      use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32,
                                           ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                     ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    default = action(profile["defaultAction"], profile.get("defaultErrnoRet") or 1)
    ctx = lib.seccomp_init(default)
    if not ctx:
        raise SystemExit("seccomp_exec: seccomp_init failed")
    # Runtimes load with CAP_SYS_ADMIN and no no_new_privs; without it the
    # kernel demands no_new_privs, which libseccomp then sets.
    has_admin = (int(open("/proc/self/status").read().split("CapEff:")[1]
                     .split()[0], 16) >> 21) & 1
    lib.seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0 if has_admin else 1)
    # The profile's archMap: on amd64 also x86 and x32, whose calls are then
    # filtered by the same rules rather than killed as a foreign arch.
    lib.seccomp_arch_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_arch_resolve_name.restype = ctypes.c_uint32
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    native = ARCH.get(platform.machine())
    for m in profile.get("archMap") or []:
        if m.get("architecture") != native:
            continue
        for sub in m.get("subArchitectures") or []:
            token = lib.seccomp_arch_resolve_name(
                sub.replace("SCMP_ARCH_", "").lower().encode())
            if token:
                lib.seccomp_arch_add(ctx, token)
    rules = 0
    for rule in profile["syscalls"]:
        if not applies(rule, caps, arch):
            continue
        act = action(rule["action"], rule.get("errnoRet") or 1)
        if act == default:
            continue
        args = rule.get("args") or []
        cmps = (ArgCmp * max(1, len(args)))(
            *[ArgCmp(a["index"], OPS[a["op"]], a["value"], a.get("valueTwo", 0))
              for a in args])
        for name in rule["names"]:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                continue  # not a syscall of this architecture
            rc = lib.seccomp_rule_add_array(ctx, act, nr, len(args), cmps)
            if rc == -22 and len(args) > 1:
                # Two conditions on one argument: libseccomp wants one rule
                # per condition (runc does the same).
                for i in range(len(args)):
                    lib.seccomp_rule_add_array(ctx, act, nr, 1,
                                               ctypes.byref(cmps[i]))
            rules += 1
    rc = lib.seccomp_load(ctx)
    if rc < 0:
        raise SystemExit("seccomp_exec: seccomp_load: %s" % os.strerror(-rc))
    os.environ["CAPSA_CONTAINER_SECCOMP_RULES"] = str(rules)
    os.execvp(sys.argv[4], sys.argv[4:])


if __name__ == "__main__":
    main()
