#!/usr/bin/python3
"""capsa's kernel matrix (`./dev kernels`): boots Debian 12's kernels under
qemu from an initramfs of our own and runs, in each, the truth probe
(tests/kernels/probe.c), `capsa doctor --json` (checked against the probe),
`capsa demo` and every test of OUT/tests.manifest, one test per process with
a timeout, as root and (sandbox tests) as uid 65534. The host kernel gets the
same run directly (tests/kernels/guest_init.sh --host).

Kernel packages are fetched with `apt-get download` and unpacked with
`dpkg-deb -x` under out/kernels/; nothing is installed into /boot.

Prints each failure's output, then one line per kernel and user
(`kernel K USER: N passed, N failed, N skipped`), the doctor-vs-truth line
per kernel and user, and a closing total line; exits 1 on any failure.

usage: run_matrix.py [--out out/default] [--only NAME[,NAME]] [--filter SUBSTR]
                     [--no-tests] [--jobs N] [--timeout SECS] [--repeat N]
NAMEs: host, 6.1, 6.12, 6.12-noia32.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KDIR = os.path.join(ROOT, "out", "kernels")
HERE = os.path.join(ROOT, "tests", "kernels")
sys.path.insert(0, os.path.join(ROOT, "tests"))
import staging  # noqa: E402  (tests/staging.py: OUT/NAME.runtime_deps)

# name, meta package (its dependency is the versioned kernel), extra cmdline.
MATRIX = [
    ("6.1", "linux-image-cloud-amd64", ""),
    ("6.12", "linux-image-6.12-cloud-amd64", ""),
    ("6.12-noia32", "linux-image-6.12-cloud-amd64", "ia32_emulation=0"),
]

# doctor --json "kernel" fields that the probe finds independently.
KERNEL_FACTS = ["no_new_privs", "seccomp_filter", "seccomp_kill_process",
                "seccomp_trap", "landlock_abi", "userns_unprivileged", "pidfd",
                "clone3", "memfd_seals", "memfd_noexec_seal", "cgroup2",
                "x32_abi"]


def log(msg):
    print("[kernels] " + msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


# --- kernels ---------------------------------------------------------------

APT_UPDATED = False


def resolve_kernel(meta):
    """The versioned linux-image package the meta package depends on, or
    None (with the reason) when apt cannot see it (after one apt-get update
    when root)."""
    global APT_UPDATED
    pkg, why = resolve_kernel_once(meta)
    if not pkg and not APT_UPDATED and os.geteuid() == 0:
        APT_UPDATED = True
        log("%s: %s; apt-get update" % (meta, why))
        subprocess.run(["apt-get", "update", "-qq"])
        pkg, why = resolve_kernel_once(meta)
    return pkg, why


def resolve_kernel_once(meta):
    p = subprocess.run(["apt-cache", "depends", "--important", meta],
                       capture_output=True, text=True)
    for line in p.stdout.splitlines():
        m = re.match(r"\s*Depends:\s*(linux-image-\S+)", line)
        if m:
            return m.group(1), ""
    return None, "apt-cache knows no %s (%s)" % (
        meta, (p.stderr.strip() or "no Depends line").splitlines()[-1])


def fetch_kernel(pkg):
    """Downloads and unpacks pkg under out/kernels/; returns (vmlinuz,
    release) or raises."""
    debs = os.path.join(KDIR, "debs")
    os.makedirs(debs, exist_ok=True)
    found = [f for f in os.listdir(debs) if f.startswith(pkg + "_")]
    if not found:
        log("apt-get download %s" % pkg)
        run(["apt-get", "download", "-q", pkg], cwd=debs,
            stdout=subprocess.DEVNULL)
        found = [f for f in os.listdir(debs) if f.startswith(pkg + "_")]
    deb = os.path.join(debs, sorted(found)[-1])
    dest = os.path.join(KDIR, "x", os.path.basename(deb)[:-4])
    if not os.path.isdir(os.path.join(dest, "boot")):
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        run(["dpkg-deb", "-x", deb, dest])
    boot = os.path.join(dest, "boot")
    vmlinuz = [f for f in os.listdir(boot) if f.startswith("vmlinuz-")][0]
    return os.path.join(boot, vmlinuz), vmlinuz[len("vmlinuz-"):]


# --- initramfs -------------------------------------------------------------

def elf_libs(paths):
    """Every shared library (and the dynamic loader) the ELF files need."""
    libs = set()
    for p in paths:
        out = subprocess.run(["ldd", p], capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.search(r"(/\S+)\s+\(0x", line)
            if m:
                libs.add(m.group(1))
    # glibc dlopens libgcc_s for pthread_cancel and backtraces.
    for extra in ["/lib/x86_64-linux-gnu/libgcc_s.so.1"]:
        if os.path.exists(extra):
            libs.add(extra)
    return sorted(libs)


def copy_into(stage, src, dst=None):
    dst = os.path.join(stage, (dst or src).lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.isdir(src):
        shutil.copytree(src, dst, symlinks=False, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dst)
    return dst


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def build_probe():
    probe = os.path.join(KDIR, "probe")
    src = os.path.join(HERE, "probe.c")
    if not os.path.exists(probe) or os.path.getmtime(probe) < os.path.getmtime(src):
        run(["cc", "-std=c17", "-O1", "-Wall", "-Wextra", "-Werror", "-static",
             "-o", probe, src])
    return probe


def env_sh(out_dir, args):
    return ("CAPSA_OUT='%s'\nCAPSA_JOBS=%d\nCAPSA_FILTER='%s'\n"
            "CAPSA_SKIP_TESTS=%d\nCAPSA_REPEAT=%d\nexport CAPSA_OUT CAPSA_JOBS "
            "CAPSA_FILTER CAPSA_SKIP_TESTS CAPSA_REPEAT\n" % (
                out_dir, args.jobs, args.filter, 1 if args.no_tests else 0,
                args.repeat))


def build_initramfs(out_dir, probe, args):
    stage = os.path.join(KDIR, "initramfs")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(stage)
    for d in ["proc", "sys", "dev", "tmp", "root", "etc", "bin", "sbin",
              "usr/bin", "usr/sbin"]:
        os.makedirs(os.path.join(stage, d), exist_ok=True)
    # busybox-static: the shell and tools; util-linux's setpriv (busybox's
    # has no --reuid) runs tests as 65534 exactly as tests/run_tests.py does.
    bb = copy_into(stage, "/bin/busybox")
    applets = subprocess.run([bb, "--list"], capture_output=True,
                             text=True).stdout.split()
    for a in applets:
        if a in ("busybox", "setpriv"):
            continue
        link = os.path.join(stage, "bin", a)
        if not os.path.exists(link):
            os.symlink("busybox", link)
    # What the tests expect of a Debian system: /bin/sh is dash (busybox's
    # ash would run its own gzip applet, which lacks -n), GNU gzip and cmp,
    # /etc/shadow to stat, localhost in /etc/hosts.
    for a in ("sh", "gzip", "gunzip", "zcat", "cmp"):
        link = os.path.join(stage, "bin", a)
        if os.path.islink(link):
            os.unlink(link)
    # flatc: InterfaceGenerator compiles the schemas it feeds capsa_idlc.
    elves = [copy_into(stage, "/usr/bin/setpriv"),
             copy_into(stage, os.path.realpath("/bin/sh"), "/bin/sh"),
             copy_into(stage, "/usr/bin/gzip"), copy_into(stage, "/usr/bin/cmp"),
             copy_into(stage, "/usr/bin/flatc")]
    # The build at the same path: capsa (doctor, demo), the test binaries and
    # what each needs at run time, as gn lists it (OUT/NAME.runtime_deps:
    # build products such as capsa and convert_example, the sample pages),
    # the same list tests/run_tests.py stages for uid 65534.
    manifest = os.path.join(out_dir, "tests.manifest")
    files = {os.path.abspath(os.path.join(out_dir, "capsa"))}
    for l in open(manifest):
        if l.strip():
            files.update(staging.runtime_deps(out_dir, l.split()[0]))
    for f in sorted(files):
        dst = copy_into(stage, f)
        if os.path.isfile(f) and open(f, "rb").read(4) == b"\x7fELF":
            elves.append(dst)
    for f in ["tests.manifest", "build.ninja"]:
        copy_into(stage, os.path.join(out_dir, f))
    # What the demo reads besides: the fonts.
    copy_into(stage, "/usr/share/fonts/truetype/dejavu")
    for lib in elf_libs(elves):
        copy_into(stage, lib)
        real = os.path.realpath(lib)
        if real != lib:
            copy_into(stage, real)
    write(os.path.join(stage, "etc", "passwd"),
          "root:x:0:0:root:/root:/bin/sh\n"
          "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
    write(os.path.join(stage, "etc", "group"),
          "root:x:0:\nnogroup:x:65534:\n")
    write(os.path.join(stage, "etc", "hostname"), "capsa-guest\n")
    write(os.path.join(stage, "etc", "shadow"), "root:*:19000:0:99999:7:::\n", 0o640)
    write(os.path.join(stage, "etc", "hosts"),
          "127.0.0.1 localhost capsa-guest\n::1 localhost ip6-localhost\n")
    write(os.path.join(stage, "etc", "nsswitch.conf"), "hosts: files dns\n")
    copy_into(stage, probe, "/capsa-kernels/probe")
    write(os.path.join(stage, "capsa-kernels", "env.sh"), env_sh(out_dir, args))
    shutil.copy2(os.path.join(HERE, "guest_init.sh"), os.path.join(stage, "init"))
    os.chmod(os.path.join(stage, "init"), 0o755)
    image = os.path.join(KDIR, "initramfs.cpio.gz")
    with open(image, "wb") as f:
        find = subprocess.Popen(["find", "."], cwd=stage, stdout=subprocess.PIPE)
        cpio = subprocess.Popen(["cpio", "-o", "-H", "newc", "--quiet"],
                                cwd=stage, stdin=find.stdout,
                                stdout=subprocess.PIPE)
        gz = subprocess.Popen(["gzip", "-1"], stdin=cpio.stdout, stdout=f)
        find.stdout.close()
        cpio.stdout.close()
        if gz.wait() or cpio.wait() or find.wait():
            raise RuntimeError("building the initramfs failed")
    log("initramfs: %s (%.0f MB)" % (image, os.path.getsize(image) / 1e6))
    return image


# --- running ---------------------------------------------------------------

KVM_FAILED = False


def boot(name, vmlinuz, initramfs, cmdline, timeout):
    """Boots one kernel; returns (results text, note, seconds)."""
    d = os.path.join(KDIR, "run", name)
    os.makedirs(d, exist_ok=True)
    # KVM where /dev/kvm is usable ("-cpu host,-arch-capabilities": nested
    # KVM refuses that MSR), else TCG. Some KVM hosts (a nested or PVM
    # guest, like the machine this was written on) start qemu but never run
    # the kernel: when the guest says nothing within 90 s, the boot is
    # retried under TCG alone. CAPSA_KERNELS_ACCEL=tcg skips KVM.
    global KVM_FAILED
    kvm = (os.access("/dev/kvm", os.R_OK | os.W_OK) and not KVM_FAILED and
           os.environ.get("CAPSA_KERNELS_ACCEL", "") != "tcg")
    tcg = ["-accel", "tcg", "-cpu", "max"]
    if kvm:
        text, note, secs = boot_with(
            d, ["-accel", "kvm", "-accel", "tcg", "-cpu", "host,-arch-capabilities"],
            vmlinuz, initramfs, cmdline, timeout, first_output=90)
        if "@@BEGIN" in text:
            return text, note, secs
        log("%s: no output under KVM (%s); retrying under TCG, and using TCG "
            "for the other kernels" % (name, note[:160]))
        KVM_FAILED = True
    text, note, secs = boot_with(d, tcg, vmlinuz, initramfs, cmdline, timeout)
    # Multi-threaded TCG can run a stale translation of kernel text that the
    # guest has just patched (a static key's int3 during text_poke_bp): the
    # guest then dies with "Oops: int3" in kernel code, a qemu artefact seen
    # here on 6.12 (__kmalloc_node_track_caller, both vCPUs at once) that no
    # real CPU produces. Such a boot is run again under single-threaded TCG
    # (slower, exact cross-modifying-code semantics); the summary says so.
    panic = tcg_text_patch_panic(os.path.join(d, "console.log"))
    if "@@END" not in text and panic:
        log("%s: guest kernel died of %s under multi-threaded TCG; running it "
            "again under single-threaded TCG" % (name, panic))
        RERUNS[name] = ("first boot died of %s under multi-threaded TCG (a qemu "
                        "cross-modifying-code artefact); rerun under "
                        "-accel tcg,thread=single" % panic)
        text, note, more = boot_with(d, ["-accel", "tcg,thread=single", "-cpu", "max"],
                                     vmlinuz, initramfs, cmdline, timeout)
        secs += more
    return text, note, secs


# name -> why its boot was run a second time (shown in its summary).
RERUNS = {}


def tcg_text_patch_panic(console):
    """'Oops: int3 at FUNC' when the guest died of an int3 trap in kernel
    code (the signature of a stale TCG translation), else ''."""
    try:
        text = open(console, errors="replace").read()
    except OSError:
        return ""
    if "Kernel panic" not in text:
        return ""
    m = re.search(r"Oops: int3\b.*\n(?:.*\n){0,4}?.*RIP: 0010:(\S+)", text)
    return "'Oops: int3' at %s" % m.group(1) if m else ""


def boot_with(d, accel, vmlinuz, initramfs, cmdline, timeout, first_output=0):
    console, results = os.path.join(d, "console.log"), os.path.join(d, "results.txt")
    for f in (console, results):
        if os.path.exists(f):
            os.unlink(f)
    cmd = ["qemu-system-x86_64"] + accel + [
           "-m", "2G", "-smp", "2", "-nodefaults", "-no-reboot",
           "-display", "none", "-monitor", "none",
           "-kernel", vmlinuz, "-initrd", initramfs,
           "-append", ("console=ttyS0 quiet loglevel=1 panic=-1 " + cmdline).strip(),
           "-serial", "file:" + console, "-serial", "file:" + results]
    note = ""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        while p.poll() is None:
            el = time.monotonic() - t0
            if first_output and el > first_output and (
                    not os.path.exists(results) or os.path.getsize(results) == 0):
                note = "no guest output after %ds" % first_output
                break
            if el > timeout:
                note = "qemu killed after %ds (see %s)" % (timeout, console)
                break
            time.sleep(1)
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()
    err = p.stderr.read()
    if not note and p.returncode != 0:
        note = "qemu exit status %d: %s" % (p.returncode, err.strip()[-300:])
    secs = time.monotonic() - t0
    text = open(results, errors="replace").read() if os.path.exists(results) else ""
    if "@@END" not in text and not note:
        note = "the guest did not finish (see %s)" % console
    return text.replace("\r", ""), note, secs


def run_host(out_dir, probe, args):
    d = os.path.join(KDIR, "run", "host")
    os.makedirs(d, exist_ok=True)
    shutil.copy2(probe, os.path.join(d, "probe"))
    write(os.path.join(d, "env.sh"), env_sh(out_dir, args))
    env = dict(os.environ, CAPSA_KERNELS_DIR=d)
    t0 = time.monotonic()
    note = ""
    try:
        p = subprocess.run(["/bin/sh", os.path.join(HERE, "guest_init.sh"),
                            "--host"], capture_output=True, text=True,
                           errors="replace", env=env, timeout=args.timeout,
                           stdin=subprocess.DEVNULL)
        text = p.stdout
        if p.returncode != 0:
            note = "guest_init.sh --host exit status %d: %s" % (
                p.returncode, p.stderr.strip()[-300:])
    except subprocess.TimeoutExpired as e:
        text = e.stdout or ""
        text = text.decode(errors="replace") if isinstance(text, bytes) else text
        note = "killed after %ds" % args.timeout
    with open(os.path.join(d, "results.txt"), "w") as f:
        f.write(text)
    return text, note, time.monotonic() - t0


# --- parsing and checking ----------------------------------------------------

def parse(text):
    r = {"kernel": "?", "cmdline": "", "lsm": "?", "probe": {}, "doctor": {},
         "doctor_rc": {}, "demo": {}, "tests": [], "outputs": {}, "end": False}
    for line in text.splitlines():
        if not line.startswith("@@"):
            continue
        tag, _, rest = line.partition(" ")
        if tag == "@@BEGIN":
            m = re.match(r"kernel=(\S+) host=\d cmdline=(.*)", rest)
            if m:
                r["kernel"], r["cmdline"] = m.group(1), m.group(2)
        elif tag == "@@LSM":
            r["lsm"] = rest
        elif tag == "@@PROBE":
            user, _, kv = rest.partition(" ")
            k, _, v = kv.partition("=")
            r["probe"].setdefault(user, {})[k] = v
        elif tag == "@@DOCTOR":
            user, _, rc = rest.partition(" rc=")
            r["doctor_rc"][user] = int(rc) if rc.isdigit() else -1
        elif tag == "@@DOCTOR-JSON":
            user, _, js = rest.partition(" ")
            try:
                r["doctor"][user] = json.loads(js)
            except ValueError as e:
                r["doctor"][user] = {"_error": "bad JSON: %s" % e}
        elif tag == "@@DEMO":
            user, _, st = rest.partition(" rc=")
            rc, _, last = st.partition(" ")
            r["demo"][user] = (int(rc) if rc.isdigit() else -1, last)
        elif tag == "@@TEST":
            parts = rest.split(" ", 4)
            if len(parts) >= 4:
                r["tests"].append((parts[0], parts[1], parts[2], parts[3],
                                   parts[4] if len(parts) > 4 else ""))
        elif tag == "@@O":
            oid, _, txt = rest.partition(" ")
            r["outputs"].setdefault(oid, []).append(txt)
        elif tag == "@@END":
            r["end"] = True
    return r


def find_key(obj, pred):
    """The first (key, value) anywhere in a JSON object whose key pred()."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if pred(k):
                return k, v
            got = find_key(v, pred)
            if got:
                return got
    elif isinstance(obj, list):
        for v in obj:
            got = find_key(v, pred)
            if got:
                return got
    return None


def truth_check(probe, doc):
    """Mismatches between doctor --json and the probe, as strings; and the
    number of facts that agree."""
    bad, agree = [], 0
    if not probe:
        return ["no probe output"], 0
    if not doc:
        return ["no doctor --json output"], 0
    if "_error" in doc:
        return [doc["_error"]], 0
    kern = doc.get("kernel", {})

    def cmp(fact, got, want):
        nonlocal agree
        if got is None:
            bad.append("%s: not in doctor --json (truth: %s)" % (fact, want))
        elif got != want:
            bad.append("%s: doctor says %s, kernel has %s" % (fact, json.dumps(got), json.dumps(want)))
        else:
            agree += 1

    def truth(k):
        v = probe.get(k)
        if v in ("true", "false"):
            return v == "true"
        return int(v) if v is not None and v.lstrip("-").isdigit() else v

    for fact in KERNEL_FACTS:
        cmp(fact, kern.get(fact), truth(fact))
    # The facts doctor must carry that it may name its own way.
    i386 = find_key(doc, lambda k: "i386" in k or "ia32" in k)
    got = i386[1] if i386 else None
    if isinstance(got, str):  # e.g. "present" / "absent"
        got = got in ("present", "yes", "true", "available")
    cmp("i386 entry", got, truth("i386_entry"))
    # cgroup v2: where, and which of the controllers capsa limits with our
    # own cgroup offers (cgroup.controllers of /proc/self/cgroup's dir).
    cg = doc.get("cgroup")
    if cg is None:
        cmp("cgroup v2 mount", None, probe.get("cgroup2_mount"))
        cmp("cgroup v2 controllers", None, probe.get("cgroup2_dir_controllers"))
    else:
        mnt = probe.get("cgroup2_mount", "absent")
        cmp("cgroup v2 mount", cg.get("mount"), "" if mnt == "absent" else mnt)
        have = set(probe.get("cgroup2_dir_controllers", "").split())
        cmp("cgroup v2 controllers (cpu, memory, pids)",
            " ".join(sorted(k for k, v in cg.get("controllers", {}).items() if v)),
            " ".join(sorted(have & {"cpu", "memory", "pids"})))
    # What capability mode applies follows from the Landlock ABI.
    cap = doc.get("capmode", {})
    abi = truth("landlock_abi") or 0
    if "error" not in cap:
        got = cap.get("landlock")
        if abi == 0 and got == "enforced":
            bad.append("capmode landlock: doctor says enforced, kernel has no Landlock")
        elif abi > 0:
            cmp("capmode landlock", got, "enforced")
        else:
            agree += 1
        if abi > 0:
            cmp("capmode landlock_abi", cap.get("landlock_abi"), abi)
            cmp("capmode landlock_fs_truncate", cap.get("landlock_fs_truncate"), abi >= 3)
            cmp("capmode landlock_net_tcp", cap.get("landlock_net_tcp"), abi >= 4)
            cmp("capmode landlock_fs_ioctl_dev", cap.get("landlock_fs_ioctl_dev"), abi >= 5)
            cmp("capmode landlock_scope_signal", cap.get("landlock_scope_signal"), abi >= 6)
    # Escapes the self-test saw.
    for c in doc.get("selftest", {}).get("checks", []):
        if c.get("result") in ("ESCAPED", "WRONG-ERRNO"):
            bad.append("selftest %s: %s (expected %s, got %s)" % (
                c.get("name"), c.get("result"), c.get("expected"), c.get("got")))
    if "error" in doc.get("selftest", {}):
        bad.append("selftest could not run: %s" % doc["selftest"]["error"])
    return bad, agree


def first_reason(lines):
    """The most telling line of a failure's output."""
    for pat in (r"Failure|Expected|error|FATAL|Assertion|Value of",
                r"\[guest\]|\[runner\]"):
        for i, l in enumerate(lines):
            if re.search(pat, l):
                nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
                return (l.strip() + (" / " + nxt if pat.startswith("Failure") and nxt else ""))[:220]
    return lines[-1].strip()[:220] if lines else ""


def report(name, r, note, secs):
    """Prints the failures of one kernel; returns its summary lines and
    failure count."""
    label = "%s (%s%s)" % (r["kernel"], name, (", " + r["extra"]) if r.get("extra") else "")
    summary, failures = [], []
    users = ["root", "nobody"]
    for u in users:
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        fails = []
        for (user, binary, test, status, why) in r["tests"]:
            if user != u:
                continue
            counts[status if status in counts else "failed"] += 1
            if status not in ("passed", "skipped"):
                fails.append((binary, test, "%s:%s:%s" % (u, binary, test)))
        # demo and doctor count as one test each.
        if u in r["demo"]:
            rc, last = r["demo"][u]
            if rc == 0:
                counts["passed"] += 1
            else:
                counts["failed"] += 1
                fails.append(("capsa", "demo (rc %d)" % rc, "demo:%s" % u))
        if u in r["doctor_rc"]:
            rc = r["doctor_rc"][u]
            if rc in (0, 1) and u in r["doctor"]:
                counts["passed"] += 1
            else:
                counts["failed"] += 1
                fails.append(("capsa", "doctor --json (rc %d%s)" % (
                    rc, ", signal %d" % (rc - 128) if rc > 128 else ""), "doctor:%s" % u))
        bad, agree = truth_check(r["probe"].get(u), r["doctor"].get(u))
        if bad:
            counts["failed"] += 1
        else:
            counts["passed"] += 1
        uname = "root" if u == "root" else "uid 65534"
        if not r["probe"].get(u) and not r["tests"]:
            continue
        summary.append("kernel %s %s: %d passed, %d failed, %d skipped" % (
            label, uname, counts["passed"], counts["failed"], counts["skipped"]))
        for binary, test, oid in fails:
            out = r["outputs"].get(oid, [])
            summary.append("  FAILED %s %s: %s" % (binary, test, first_reason(out)))
            failures.append((name, uname, binary, test, out))
        lsm = r["probe"].get(u, {}).get("landlock_abi", "?")
        summary.append("  doctor vs truth (%s): %s" % (
            uname, ("%d facts agree (Landlock ABI %s, i386 entry %s, doctor rc %s)" % (
                agree, lsm, r["probe"].get(u, {}).get("i386_detail", "?"),
                r["doctor_rc"].get(u, "?"))) if not bad else
            "%d MISMATCHES, %d agree:\n    %s" % (len(bad), agree, "\n    ".join(bad))))
        if bad:
            failures.append((name, uname, "doctor-vs-truth", "", bad))
    if name in RERUNS:
        summary.append("  note: %s" % RERUNS[name])
    if note:
        summary.append("  INCOMPLETE: %s" % note)
        failures.append((name, "-", "run", note, []))
    summary.append("  LSMs: %s; wall %.0fs" % (r["lsm"], secs))
    for (_, uname, binary, test, out) in failures:
        if out:
            print("---- FAILED %s %s %s %s ----" % (label, uname, binary, test))
            print("\n".join(out))
            print("---- end ----")
    return summary, len(failures)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "default"))
    ap.add_argument("--only", default="")
    ap.add_argument("--filter", default="")
    ap.add_argument("--no-tests", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1800,
                    help="seconds allowed per kernel (qemu is killed after)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each selected test N times (to catch a flaky one)")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    only = set(filter(None, args.only.split(",")))
    t0 = time.monotonic()
    os.makedirs(KDIR, exist_ok=True)
    probe = build_probe()
    initramfs = None
    summaries, nfail, skipped = [], 0, []
    kvm = os.access("/dev/kvm", os.R_OK | os.W_OK)
    log("qemu accelerator: %s" % ("kvm" if kvm else "tcg (no /dev/kvm: slow)"))

    rows = [("host", None, "")] + MATRIX
    for name, meta, extra in rows:
        if only and name not in only:
            continue
        if meta is None:
            log("host kernel %s: running the guest script directly" % os.uname().release)
            text, note, secs = run_host(args.out, probe, args)
        else:
            pkg, why = resolve_kernel(meta)
            if not pkg:
                skipped.append("%s: SKIPPED, %s" % (name, why))
                continue
            try:
                vmlinuz, release = fetch_kernel(pkg)
            except (subprocess.CalledProcessError, OSError, IndexError) as e:
                skipped.append("%s: SKIPPED, cannot fetch %s: %s" % (name, pkg, e))
                continue
            if initramfs is None:
                initramfs = build_initramfs(args.out, probe, args)
            log("booting %s (%s)%s" % (release, pkg, (" with " + extra) if extra else ""))
            text, note, secs = boot(name, vmlinuz, initramfs, extra, args.timeout)
        r = parse(text)
        r["extra"] = extra
        s, n = report(name, r, note, secs)
        summaries += s
        nfail += n
        log("%s done in %.0fs" % (name, secs))
    print()
    for line in summaries + skipped:
        print(line)
    wall = time.monotonic() - t0
    print("kernel matrix: %d failures%s; wall time %dm%02ds" % (
        nfail, (", %d kernels skipped" % len(skipped)) if skipped else "",
        wall // 60, wall % 60))
    return 1 if nfail or skipped else 0


if __name__ == "__main__":
    sys.exit(main())
