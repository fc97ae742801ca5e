#!/bin/sh
# capsa's kernel-matrix guest: /init of the initramfs that
# tests/kernels/run_matrix.py boots under qemu (also run on the host as
# `guest_init.sh --host` for the host kernel's row).
#
# Stage 1 (pid 1 on the initramfs): pivot_root(2) refuses the initial
# rootfs, and capsa's launcher pivots into an empty root, so everything is
# copied into a tmpfs and switch_root makes that the root.
# Stage 2: mounts proc/sys/securityfs/cgroup2/tmpfs, then runs the probe,
# `capsa doctor --json`, `capsa demo` and every test of tests.manifest, one
# test per process under `timeout`, as root and (sandbox tests) as uid 65534.
# Results go to the results port (/dev/ttyS1, or stdout on the host) as lines
# starting with "@@"; the host-side driver parses only those.
#
# Layout (the same absolute paths as on the host, so tests that find their
# build or source tree next to their binary work): $CAPSA_OUT holds capsa,
# the test binaries and tests.manifest; /capsa-kernels/probe the probe.
# Ends with poweroff -f in the guest.
set -u

if [ "${1:-}" != "--host" ] && [ "$$" = 1 ] && [ "${CAPSA_STAGE:-1}" = 1 ]; then
  mount -t proc proc /proc
  mount -t devtmpfs dev /dev 2>/dev/null
  mkdir -p /newroot
  mount -t tmpfs -o mode=0755 root /newroot
  for d in /*; do
    case "$d" in /newroot | /proc | /dev | /sys) continue ;; esac
    cp -a "$d" /newroot/
  done
  mkdir -p /newroot/proc /newroot/dev /newroot/sys
  umount /dev 2>/dev/null
  umount /proc
  export CAPSA_STAGE=2
  exec switch_root /newroot /init
fi

HOST=0
[ "${1:-}" = "--host" ] && HOST=1
KDIR=${CAPSA_KERNELS_DIR:-/capsa-kernels}
. "$KDIR/env.sh" # CAPSA_OUT, CAPSA_JOBS, CAPSA_FILTER, CAPSA_SKIP_TESTS, CAPSA_REPEAT
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

if [ $HOST = 0 ]; then
  mount -t proc proc /proc
  mount -t sysfs sys /sys
  mount -t devtmpfs dev /dev
  mkdir -p /dev/pts /dev/shm
  mount -t devpts devpts /dev/pts
  mount -t tmpfs -o mode=1777 shm /dev/shm
  mount -t securityfs securityfs /sys/kernel/security
  mount -t cgroup2 cgroup2 /sys/fs/cgroup
  mount -t tmpfs -o mode=1777 tmp /tmp
  hostname capsa-guest
  ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
  ln -sf /proc/self/fd /dev/fd
  exec 3>/dev/ttyS1
  stty -F /dev/ttyS1 raw -echo 2>/dev/null
  WORK=/tmp/capsa-kernels
else
  exec 3>&1
  WORK=$(mktemp -d /tmp/capsa-kernels-XXXXXX)
fi
mkdir -p "$WORK"
chmod 1777 "$WORK"
NOBODY_CWD="$WORK/nobody"
mkdir -p "$NOBODY_CWD"
chmod 0777 "$NOBODY_CWD"

say() { printf '%s\n' "$*" >&3; }
# A failure's output: its last lines, each as "@@O ID text" so that lines
# of the parallel workers may interleave. ID has no spaces.
say_output() { # ID FILE
  tail -n 60 "$2" | sed "s|^|@@O $1 |" >&3
}

as_user() { # USER CMD...: runs CMD as root or as uid/gid 65534
  u=$1
  shift
  if [ "$u" = root ]; then
    "$@"
  else
    HOME=$NOBODY_CWD /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups \
      --inh-caps=-all "$@"
  fi
}

say "@@BEGIN kernel=$(uname -r) host=$HOST cmdline=$(cat /proc/cmdline 2>/dev/null)"
say "@@LSM $(cat /sys/kernel/security/lsm 2>/dev/null || echo absent)"

for u in root nobody; do
  as_user $u "$KDIR/probe" >"$WORK/probe.$u" 2>&1
  sed "s/^/@@PROBE $u /" "$WORK/probe.$u" >&3
  # doctor may crash (a signal) on some kernels: report its status and
  # output either way; the driver compares its JSON with the probe.
  (cd "$NOBODY_CWD" && as_user $u timeout -s KILL 60 "$CAPSA_OUT/capsa" \
    doctor --json) >"$WORK/doctor.$u" 2>"$WORK/doctor-err.$u"
  rc=$?
  say "@@DOCTOR $u rc=$rc"
  grep '^{' "$WORK/doctor.$u" | head -n 1 | sed "s/^/@@DOCTOR-JSON $u /" >&3
  [ $rc -gt 1 ] && { cat "$WORK/doctor.$u" "$WORK/doctor-err.$u" >"$WORK/d"; say_output "doctor:$u" "$WORK/d"; }
  (cd "$NOBODY_CWD" && as_user $u timeout -s KILL 120 "$CAPSA_OUT/capsa" demo \
    --out "$NOBODY_CWD/demo.$u") \
    >"$WORK/demo.$u" 2>&1
  rc=$?
  say "@@DEMO $u rc=$rc $(tail -n 1 "$WORK/demo.$u")"
  [ $rc -ne 0 ] && say_output "demo:$u" "$WORK/demo.$u"
done

# Each of capsa's processes (a test binary, a zygote, its renderers): pid,
# state, wchan, command line, then each thread's state, syscall (number and
# arguments) and kernel stack
# (root only: /proc/PID/stack needs CAP_SYS_ADMIN).
dump_processes() {
  echo "[guest] capsa's processes shortly before the watchdog:"
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)
    case "$cmd" in *"$CAPSA_OUT"* | capsa-zygote*) ;; *) continue ;; esac
    st=$(awk '/^State:/ { print $2 }' "$p/status" 2>/dev/null)
    echo "[guest] pid ${p#/proc/} $st wchan=$(cat "$p/wchan" 2>/dev/null) $cmd"
    for t in "$p"/task/*; do
      echo "[guest]   task ${t##*/} $(awk '/^State:/ { print $2 }' "$t/status" 2>/dev/null) wchan=$(cat "$t/wchan" 2>/dev/null) syscall=$(cat "$t/syscall" 2>/dev/null)"
      sed 's/^/[guest]     /' "$t/stack" 2>/dev/null
    done
  done
}

# One test: prints "@@TEST user binary test status" (+ its output on failure).
run_test() { # USER BIN TEST TIMEOUT
  u=$1 bin=$2 t=$3 secs=$4
  out="$WORK/out.$$.${i:-0}.$(echo "$bin.$t.$u" | tr '/' '_')"
  if [ "$u" = root ]; then cwd=$CAPSA_OUT; else cwd=$NOBODY_CWD; fi
  # Shortly before the test's own watchdog (SIGALRM at $secs) ends it, a
  # test still running gets the state and kernel stack of each of capsa's
  # processes (the test, its zygote, its renderers) recorded: where it hangs.
  # Its output goes nowhere: `kill $dumper` ends the subshell, not the
  # sleep in it, which would otherwise hold the caller's output pipe open
  # (the host row sat idle ~290 s after its last test, waiting for EOF).
  touch "$out.running"
  (sleep $((secs > 20 ? secs - 10 : secs / 2)) && [ -e "$out.running" ] &&
    dump_processes >"$out.dump") </dev/null >/dev/null 2>&1 &
  dumper=$!
  (cd "$cwd" && export CAPSA_TEST_TIMEOUT="$secs" && as_user "$u" timeout -s KILL \
    $((secs + 10)) "$CAPSA_OUT/$bin" --gtest_filter="$t" --gtest_color=no \
    </dev/null) >"$out" 2>&1
  rc=$?
  rm -f "$out.running"
  kill $dumper 2>/dev/null
  if [ $rc -eq 0 ] && grep -q '^\[  SKIPPED \]' "$out"; then
    st=skipped
  elif [ $rc -eq 0 ] && grep -q '^\[  PASSED  \] 1 test' "$out"; then
    st=passed
  elif [ $rc -eq 0 ]; then
    st=failed
    echo "[guest] test did not run" >>"$out"
  else
    st=failed
    # busybox timeout: 124 when it fired (137 if the signal reached us).
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      echo "[guest] killed after the $((secs + 10))s timeout" >>"$out"
    fi
    echo "[guest] exit status $rc" >>"$out"
  fi
  if [ $st = skipped ]; then
    why=$(grep -v '^\[' "$out" | grep -i skip | head -n 1)
    say "@@TEST $u $bin $t $st $why"
  else
    say "@@TEST $u $bin $t $st"
  fi
  if [ $st = failed ]; then
    say_output "$u:$bin:$t" "$out"
    [ -s "$out.dump" ] && tail -n 400 "$out.dump" | sed "s|^|@@O $u:$bin:$t |" >&3
  fi
  rm -f "$out" "$out.dump"
}

# Every (user, binary, test, timeout) line, then CAPSA_JOBS workers.
: >"$WORK/todo"
if [ "${CAPSA_SKIP_TESTS:-0}" != 1 ]; then
  while read -r bin unpriv secs; do
    [ -n "$bin" ] || continue
    users=root
    [ "$unpriv" = true ] && users="root nobody"
    for u in $users; do
      if ! as_user $u "$CAPSA_OUT/$bin" --gtest_list_tests >"$WORK/list" 2>&1; then
        say "@@TEST $u $bin (list) failed"
        say_output "$u:$bin:(list)" "$WORK/list"
        continue
      fi
      awk -v u="$u" -v b="$bin" -v s="$secs" -v f="${CAPSA_FILTER:-}" -v n="${CAPSA_REPEAT:-1}" '
        { sub(/#.*/, ""); sub(/[ \t]+$/, "") }
        $0 == "" { next }
        /^[^ ]/ { suite = $0; next }
        { t = suite $1; if (f == "" || index(t, f)) for (i = 0; i < n; i++) print u, b, t, s }' \
        "$WORK/list" >>"$WORK/todo"
    done
  done <"$CAPSA_OUT/tests.manifest"
fi
say "@@TODO $(wc -l <"$WORK/todo")"

jobs=${CAPSA_JOBS:-2}
i=0
while [ $i -lt "$jobs" ]; do
  awk -v n="$jobs" -v i=$i 'NR % n == i' "$WORK/todo" >"$WORK/todo.$i"
  (while read -r u bin t secs; do run_test "$u" "$bin" "$t" "$secs"; done \
    <"$WORK/todo.$i") &
  i=$((i + 1))
done
wait
say "@@END"

if [ $HOST = 0 ]; then
  sync
  poweroff -f
else
  rm -rf "$WORK"
fi
