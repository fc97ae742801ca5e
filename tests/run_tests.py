#!/usr/bin/python3
"""Runs every capsa test binary listed in each build directory's
tests.manifest, one test per process, with a timeout per test.

Binaries marked run_unprivileged are run a second time as uid/gid 65534 when
the runner is root, from a copy of what they need (OUT/NAME.runtime_deps,
tests/staging.py) in a temporary directory that user can reach, wherever the
checkout lives. Before any test runs, the runner checks as uid 65534 that
every staged file is readable; what is not, or is listed but not built,
counts as a failure with its reason. The last line printed is `N passed,
N failed` (with `, N skipped` when any were skipped); the exit code is
non-zero if anything failed.

usage: run_tests.py [--jobs N] [--filter SUBSTR] OUT_DIR [OUT_DIR ...]
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time

import staging

NOBODY = 65534


def list_tests(binary):
    out = subprocess.run([binary, "--gtest_list_tests"], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError("cannot list tests of %s: %s" % (binary, out.stderr))
    tests, suite = [], None
    for line in out.stdout.splitlines():
        name = line.split("#", 1)[0].rstrip()
        if not name:
            continue
        if not line.startswith(" "):
            suite = name
        else:
            tests.append(suite + name.strip())
    return tests


def timed(fn, *args):
    t = time.monotonic()
    result = fn(*args)
    return result, time.monotonic() - t


def run_one(binary, test, timeout, unprivileged, cwd, home):
    cmd = [binary, "--gtest_filter=" + test, "--gtest_color=no"]
    env = dict(os.environ)
    env["CAPSA_TEST_TIMEOUT"] = str(timeout)
    if unprivileged:
        cmd = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
               "--clear-groups", "--inh-caps=-all"] + cmd
        env["HOME"] = home
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=timeout + 10, env=env, cwd=cwd,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"")
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return "failed", out + "\n[runner] killed after %ds timeout\n" % timeout
    output = p.stdout + p.stderr
    if p.returncode == 0 and "[  SKIPPED ]" in p.stdout:
        return "skipped", output
    if p.returncode == 0 and "[  PASSED  ] 1 test" in p.stdout:
        return "passed", output
    if p.returncode == 0:
        return "failed", output + "\n[runner] test did not run\n"
    return "failed", output + "\n[runner] exit status %d\n" % p.returncode


def skip_reason(output):
    for line in output.splitlines():
        if "Skipped" in line or "skip" in line.lower():
            if not line.startswith("["):
                return line.strip()
    return ""


def read_manifest(out_dir):
    path = os.path.join(out_dir, "tests.manifest")
    entries = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3:
                entries.append((parts[0], parts[1] == "true", int(parts[2])))
    return entries


def stage_unprivileged(out_dirs, tmp, counts, failures):
    """Copies what each run_unprivileged binary needs into TMP/<config>
    (tests/staging.py) and checks, as uid 65534, that all of it can be read
    there. Returns {(out_dir, name): staged binary, or the reason its pass
    cannot run}. Every problem is printed now and counts as one failure."""
    staged, problems, dests = {}, [], set()
    for out_dir in out_dirs:
        config = os.path.basename(os.path.normpath(out_dir))
        try:
            manifest = read_manifest(out_dir)
        except OSError:
            continue  # main() reports it
        dest = os.path.join(tmp, config)
        while dest in dests:  # a/default and b/default
            dest += "+"
        dests.add(dest)
        stage = staging.Stage(out_dir, dest)
        for name, unpriv, _ in manifest:
            if not unpriv:
                continue
            try:
                staged[(out_dir, name)] = stage.add(name)
            except OSError as e:
                why = "cannot stage for uid %d: %s (run gn gen %s again?)" % (
                    NOBODY, e, out_dir)
                staged[(out_dir, name)] = RuntimeError(why)
        for path, name in stage.missing:
            problems.append("%s/%s needs %s, which is not there: build it "
                            "(./dev build)" % (config, name, path))
    if os.path.isdir(tmp):
        bad = staging.unreachable_as(NOBODY, NOBODY, tmp)
        if bad:
            problems.append(
                "uid %d cannot use the staged copy in %s (is every directory "
                "down to the temporary directory %s searchable by all? Set "
                "TMPDIR to one that is)\n    %s" %
                (NOBODY, tmp, tempfile.gettempdir(), "\n    ".join(bad[:20])))
            for k in staged:
                staged[k] = RuntimeError("not run: uid %d cannot read its "
                                         "staged copy" % NOBODY)
    for p in problems:
        print("[runner] FAIL %s" % p)
        counts["failed"] += 1
        failures.append(p.split("\n")[0].split(" (")[0])
    sys.stdout.flush()
    return staged


def run_fuzzers(out_dir, counts, failures):
    """Runs each libFuzzer target of OUT_DIR/fuzzers.manifest (written by
    tests/fuzz/BUILD.gn) for its few seconds, from its seed corpus; new inputs
    go to a temporary directory, never into the tree. Each counts as one test."""
    path = os.path.join(out_dir, "fuzzers.manifest")
    if not os.path.exists(path):
        return
    config = os.path.basename(os.path.normpath(out_dir))
    with open(path) as f:
        entries = [l.split() for l in f if len(l.split()) == 3]
    for binary, corpus, seconds in entries:
        binary = os.path.abspath(os.path.join(out_dir, binary))
        corpus = os.path.abspath(os.path.join(out_dir, corpus))
        label = "%s/%s (fuzz %ss)" % (config, os.path.basename(binary), seconds)
        if not os.path.exists(binary):
            # The manifest lists every fuzzer; only build dirs that built the
            # `fuzzers` group have them (./dev: out/asan).
            continue
        with tempfile.TemporaryDirectory(prefix="capsa-fuzz-") as work:
            cmd = [binary, "-max_total_time=%s" % seconds, "-timeout=10",
                   "-print_final_stats=0", work]
            if os.path.isdir(corpus):  # seed corpus, read only
                cmd.append(corpus)
            try:
                p = subprocess.run(cmd, capture_output=True, text=True,
                                   errors="replace", cwd=work,
                                   timeout=int(seconds) + 60,
                                   stdin=subprocess.DEVNULL)
                ok, output = p.returncode == 0, p.stdout + p.stderr
            except (OSError, subprocess.TimeoutExpired) as e:
                ok, output = False, str(e)
        runs = [l for l in output.splitlines() if l.startswith("Done ")]
        if ok:
            counts["passed"] += 1
            print("[runner] %-45s passed: %s" % (label, runs[-1] if runs else ""))
        else:
            counts["failed"] += 1
            failures.append(label)
            print("---- FAILED %s ----\n%s\n---- end ----" % (label, output[-4000:]))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default="")
    ap.add_argument("out_dirs", nargs="+")
    args = ap.parse_args()

    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failures = []
    durations = []
    is_root = os.geteuid() == 0
    unpriv_tmp = tempfile.mkdtemp(prefix="capsa-unpriv-")
    try:
        # Readable by all, writable by root only (the copies); HOME of the
        # uid 65534 pass is its own writable directory.
        os.chmod(unpriv_tmp, 0o755)
        home = os.path.join(unpriv_tmp, "home")
        os.mkdir(home)
        os.chmod(home, 0o777)
        staged = {}
        if is_root:
            staged = stage_unprivileged(args.out_dirs,
                                        os.path.join(unpriv_tmp, "stage"),
                                        counts, failures)
        for out_dir in args.out_dirs:
            config = os.path.basename(os.path.normpath(out_dir))
            try:
                manifest = read_manifest(out_dir)
            except OSError as e:
                print("[runner] %s: no test manifest (%s)" % (out_dir, e))
                counts["failed"] += 1
                failures.append("%s: no test manifest" % out_dir)
                continue
            for name, unpriv, timeout in manifest:
                binary = os.path.abspath(os.path.join(out_dir, name))
                passes = [(False, binary)]
                if unpriv and is_root:
                    passes.append((True, staged[(out_dir, name)]))
                elif unpriv:
                    print("[runner] %s: already unprivileged, no second pass" % name)
                for unprivileged, path in passes:
                    label = "%s/%s%s" % (config, name,
                                         " (uid %d)" % NOBODY if unprivileged else "")
                    try:
                        if isinstance(path, Exception):
                            raise path
                        tests = [t for t in list_tests(path) if args.filter in t]
                    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                        print("[runner] FAIL %s: %s" % (label, e))
                        counts["failed"] += 1
                        failures.append(label)
                        continue
                    # The root pass runs in the build directory, the uid 65534
                    # pass in its staged copy.
                    cwd = os.path.dirname(path)
                    local = {"passed": 0, "failed": 0, "skipped": 0}
                    started = time.monotonic()
                    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
                        futs = {ex.submit(timed, run_one, path, t, timeout,
                                          unprivileged, cwd, home): t
                                for t in tests}
                        for fut in concurrent.futures.as_completed(futs):
                            t = futs[fut]
                            (status, output), secs = fut.result()
                            durations.append((secs, "%s %s" % (label, t)))
                            local[status] += 1
                            if status == "failed":
                                failures.append("%s %s" % (label, t))
                                print("---- FAILED %s %s ----" % (label, t))
                                print(output.rstrip())
                                print("---- end %s ----" % t)
                            elif status == "skipped":
                                print("[runner] skipped %s %s: %s" %
                                      (label, t, skip_reason(output)))
                    for k in counts:
                        counts[k] += local[k]
                    print("[runner] %-45s %d passed, %d failed, %d skipped "
                          "(%.0f s)" % (label, local["passed"], local["failed"],
                                        local["skipped"],
                                        time.monotonic() - started))
                    sys.stdout.flush()
            if not args.filter:
                run_fuzzers(out_dir, counts, failures)
    finally:
        shutil.rmtree(unpriv_tmp, ignore_errors=True)

    if durations:
        # Where the suite's time goes (one test per process; --jobs at once).
        durations.sort(reverse=True)
        print("\nSlowest tests:")
        for secs, what in durations[:8]:
            print("  %6.1f s  %s" % (secs, what))
    if failures:
        print("\nFailed:")
        for f in failures:
            print("  " + f)
    line = "%d passed, %d failed" % (counts["passed"], counts["failed"])
    if counts["skipped"]:
        line += ", %d skipped" % counts["skipped"]
    print(line)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
