#!/usr/bin/python3
"""capsa's container matrix (`./dev containers`): runs `capsa doctor`,
`capsa demo` and the sandbox and host test binaries inside containers
assembled by hand on this machine, the pieces a runtime puts together:

  new mount, pid, network, ipc and uts namespaces with /proc remounted
  (unshare --pid --fork --mount-proc ...), so the program is pid 1;
  the runtimes' default seccomp profile (containers-common's
  /usr/share/containers/seccomp.json, loaded by seccomp_exec.py, rules
  filtered for the capabilities kept, as the runtime does);
  Docker's default capability set, without CAP_SYS_ADMIN (setpriv
  --bounding-set); a non-root uid; no_new_privs preset (Kubernetes'
  allowPrivilegeEscalation: false); user namespaces refused
  (max_user_namespaces=0 inside a user namespace).

No OCI runtime is used: Debian 12's crun refuses this machine's hybrid cgroup
layout and no image registry is reachable; each piece above is what runc,
crun or podman would apply (see README, "Inside containers").

Prints one line per environment:
  container ENV: doctor OK|exit N (missing: ...), demo passed|FAILED,
                 tests N passed, N failed, N skipped
and exits 1 when any environment failed. An environment passes when the
doctor's verdict agrees with the demo (both succeed, or both refuse with the
reason), the demo passes where doctor says it can, and no test fails.

usage: run_matrix.py [--out out/default] [--only ENV[,ENV]] [--filter GTEST]
                     [--no-tests] [--timeout SECS]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "containers")
PROFILE = "/usr/share/containers/seccomp.json"
PY = "/usr/bin/python3"

# Docker's (and containerd's, CRI-O's) default capability set.
DOCKER_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER",
               "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID",
               "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
               "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]
NONROOT = 1000
NS = ["unshare", "--pid", "--fork", "--mount-proc", "--net", "--ipc", "--uts"]
# The sandbox and host test binaries (capmode_tests holds sandbox/'s).
TESTS = ["capmode_tests", "host_tests"]


def runtime(uid=0, nnp=False):
    """The runtime's pieces after the namespaces: seccomp, caps, uid."""
    bset = "-all," + ",".join("+" + c[4:].lower() for c in DOCKER_CAPS)
    priv = ["setpriv", "--bounding-set", bset, "--inh-caps", "-all"]
    if uid:
        priv += ["--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups"]
    if nnp:
        priv += ["--no-new-privs"]
    return [PY, os.path.join(HERE, "seccomp_exec.py"), PROFILE,
            ",".join(DOCKER_CAPS), "--"] + priv


# name, prefix (the program follows; it runs as pid 1), expect_start:
# whether a host can start there (False: it must refuse, and say why).
ENVS = [
    ("pid1", NS, True),
    ("runtime-root", NS + runtime(), True),
    ("runtime-uid%d" % NONROOT, NS + runtime(NONROOT), True),
    ("runtime-nnp", NS + runtime(nnp=True), True),
    ("userns-refused",
     ["unshare", "--user", "--map-root-user"] + NS[1:] +
     ["sh", "-c", "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"",
      "sh"], True),
    ("proc-not-remounted", ["unshare", "--pid", "--fork"], False),
]


def log(msg):
    print("[containers] " + msg, file=sys.stderr, flush=True)


def run(prefix, argv, timeout, cwd):
    """(exit status or None on timeout, output) of prefix + argv."""
    env = dict(os.environ, CAPSA_TEST_TIMEOUT="120")
    try:
        # start_new_session: a timeout kills the whole tree, and no process
        # left behind keeps the output pipe open past it.
        p = subprocess.Popen(prefix + argv, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, cwd=cwd, env=env,
                             start_new_session=True)
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, _ = p.communicate()
        return None, out.decode(errors="replace") + "\n[timed out]"


def doctor_missing(out):
    """What doctor --json says is missing, in a few words."""
    try:
        d = json.loads(out[out.index("{"):])
    except ValueError:
        return "no JSON"
    what = []
    cap = d.get("capmode", {})
    for layer in ("no_new_privs", "landlock", "seccomp"):
        st = cap.get(layer)
        if isinstance(st, str) and st not in ("enforced",):
            what.append("%s=%s" % (layer, st))
    if d.get("namespaces", {}).get("missing"):
        what.append("namespaces " + d["namespaces"]["missing"])
    box = d.get("container", {})
    if box and not box.get("proc_ok", True):
        what.append("/proc of another pid namespace")
    seen = []
    if box.get("pid") == 1:
        seen.append("pid 1")
    if box.get("seccomp_mode") == 2:
        seen.append("a seccomp filter on entry")
    if box.get("nnp_preset"):
        seen.append("no_new_privs on entry")
    if box and not box.get("cap_sys_admin"):
        seen.append("no CAP_SYS_ADMIN")
    if box and not box.get("cap_sys_ptrace", True):
        seen.append("no CAP_SYS_PTRACE")
    return "%s; saw %s" % (", ".join(what) or "nothing",
                           ", ".join(seen) or "nothing unusual")


def gtest_counts(out):
    def n(pat):
        m = re.search(pat, out)
        return int(m.group(1)) if m else 0
    passed = n(r"\[  PASSED  \] (\d+) test")
    failed = n(r"\[  FAILED  \] (\d+) test")
    skipped = n(r"\[  SKIPPED \] (\d+) test")
    return passed, failed, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "default"))
    ap.add_argument("--only", default="")
    ap.add_argument("--filter", default="")
    ap.add_argument("--no-tests", action="store_true")
    ap.add_argument("--timeout", type=int, default=900)
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    capsa = os.path.join(out, "capsa")
    for need in ["unshare", "setpriv"]:
        if not shutil.which(need):
            sys.exit("containers: %s not found (util-linux)" % need)
    if not os.path.exists(PROFILE):
        sys.exit("containers: %s missing: ./dev containers installs "
                 "golang-github-containers-common" % PROFILE)
    if os.geteuid() != 0:
        sys.exit("containers: run as root (the runtime's pieces need it)")
    only = set(x for x in a.only.split(",") if x)
    lines, failures = [], 0
    for name, prefix, expect_start in ENVS:
        if only and name not in only:
            continue
        log("%s ..." % name)
        t0 = time.time()
        # A directory every uid may write: the demo's PNG, the tests' files.
        work = tempfile.mkdtemp(prefix="capsa-container-")
        os.chmod(work, 0o1777)
        drc, dout = run(prefix, [capsa, "doctor", "--json"], 120, work)
        missing = doctor_missing(dout)
        mrc, mout = run(prefix, [capsa, "demo", "--out", work], 300, work)
        demo_ok = mrc == 0 and "demo: FAILED" not in mout
        bad = []
        if expect_start:
            if not demo_ok:
                bad.append("demo failed")
            if drc == 0 and not demo_ok:
                bad.append("doctor claims capability mode where the demo fails")
        else:
            # The host must refuse, and doctor with it, each saying why.
            if mrc == 0 or "another pid namespace" not in mout:
                bad.append("demo did not refuse with the reason")
            if drc == 0:
                bad.append("doctor claims capability mode where no host starts")
        tp = tf = ts = 0
        if expect_start and not a.no_tests:
            for t in TESTS:
                binary = os.path.join(out, t)
                argv = [binary] + (["--gtest_filter=" + a.filter]
                                   if a.filter else [])
                rc, tout = run(prefix, argv, a.timeout, work)
                p, f, s = gtest_counts(tout)
                if rc != 0 and f == 0:
                    f = 1  # died, timed out, or refused to run
                tp, tf, ts = tp + p, tf + f, ts + s
                if rc != 0:
                    bad.append("%s exit %s" % (t, rc))
                    print("--- %s %s output (tail) ---\n%s" %
                          (name, t, "\n".join(tout.splitlines()[-40:])))
        if bad and not demo_ok:
            print("--- %s demo output (tail) ---\n%s" %
                  (name, "\n".join(mout.splitlines()[-15:])))
        shutil.rmtree(work, ignore_errors=True)
        ok = not bad
        failures += 0 if ok else 1
        line = ("container %s: %s; doctor %s (missing: %s), demo %s, "
                "tests %d passed, %d failed, %d skipped (%.0f s)%s" %
                (name, "passed" if ok else "FAILED",
                 "ok" if drc == 0 else "exit %s" % drc, missing,
                 "passed" if demo_ok else
                 ("refused" if not expect_start else "FAILED"),
                 tp, tf, ts, time.time() - t0,
                 "" if ok else " [" + "; ".join(bad) + "]"))
        print(line, flush=True)
        lines.append(line)
    print("\n".join(lines))
    print("containers: %d environments, %d failed" % (len(lines), failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
