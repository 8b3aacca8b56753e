#!/bin/sh
# ci-example.sh - examples/ci/github-actions.yml's steps, run as a GitHub
# runner runs them, on a clean clone (make check-ci-example; slow, not part
# of make check: a Debian 12 root is bootstrapped and the job's packages
# installed in it, a few minutes and a few hundred MB from Debian's
# mirror).  Needs root, debootstrap, git, python3 with yaml, and the
# probe-enabled glibc (the runner's Ubuntu glibc has the probes).
#
#  1. "Install ... build dependencies": the packages the job's apt-get
#     line names, and only those (besides git and ca-certificates, which
#     a runner image has), in a fresh `debootstrap --variant=minbase
#     bookworm` root: if they do not build mallocwatch, step 2 fails;
#  2. "Build mallocwatch": the step's commands in that root, cloning this
#     repository's HEAD where the job clones its URL;
#  3. "Build the program", "Check arenas against the baseline" and "Keep
#     the report": on this machine (tracing needs its kernel), in a project
#     of examples/arena-storm as ./app with examples/ci/mallocwatch.mk and
#     the clone's mallocwatch, built here: a baseline of 2 threads, then
#     the job's check of 4: exit 3, an ::error annotation naming arenas,
#     the step summary's table in $GITHUB_STEP_SUMMARY, the report kept.
#
# MW_CI_YML: another workflow file of the same job (default
# examples/ci/github-actions.yml).  Exit 0 when every step did what the
# job expects, 1 with the step that did not; the work is left in
# $MW_CI_DIR (default build/ci-example).
set -u
cd "$(dirname "$0")/.." || exit 1
top=$PWD
yml=${MW_CI_YML:-examples/ci/github-actions.yml}
dir=${MW_CI_DIR:-$top/build/ci-example}
root=$dir/root
fail() { echo "ci-example: FAIL: $*"; exit 1; }
say() { echo "ci-example: $*"; }
[ "$(id -u)" = 0 ] || fail "needs root (debootstrap, chroot, tracing)"
for c in debootstrap git python3; do
	command -v $c >/dev/null || fail "needs $c"
done

# the job's steps, each one's run: text into $dir/step-N.sh, a line each
# in $dir/steps ("N NAME")
rm -rf "$dir" && mkdir -p "$dir" || exit 1
python3 - "$yml" "$dir" <<'PY' || fail "cannot read the steps of $yml"
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))["jobs"]["arenas"]
with open(sys.argv[2] + "/steps", "w") as out:
    for i, st in enumerate(job["steps"]):
        out.write("%d %s\n" % (i, st.get("name") or st.get("uses")))
        if "run" in st:
            open("%s/step-%d.sh" % (sys.argv[2], i), "w").write(st["run"])
PY
step() {	# the file of the step whose name begins with $1
	n=$(awk -v w="$1" 'index(substr($0, index($0, " ") + 1), w) == 1 { print $1; exit }' "$dir/steps")
	[ -n "$n" ] && [ -f "$dir/step-$n.sh" ] || fail "no step '$1' with commands in $yml"
	echo "$dir/step-$n.sh"
}

# 1. the packages, in a bare root
pkgs=$(sed -n '/apt-get install/,/[^\\]$/p' "$(step "Install")" | tr -d '\\' |
	sed 's/.*apt-get install//' | tr ' ' '\n' | grep -v '^-' | grep . | tr '\n' ' ')
[ -n "$pkgs" ] || fail "no apt-get install line in the install step"
say "1. debootstrap a Debian 12 root; the job's packages: $pkgs"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$dir/debootstrap.log" 2>&1 ||
	fail "debootstrap (see $dir/debootstrap.log)"
chroot "$root" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	git ca-certificates $pkgs" >"$dir/apt.log" 2>&1 || fail "the job's packages (see $dir/apt.log)"

# 2. the build step in that root, from a clean clone of HEAD
say "2. the build step, in the root, on a clone of $(git rev-parse --short HEAD)"
git clone -q --bare "$top" "$root/src/mallocwatch.git" || fail "cannot clone $top"
sed 's|https://example.invalid/mallocwatch.git|file:///src/mallocwatch.git|' "$(step "Build mallocwatch")" \
	>"$root/build-step.sh"
grep -q "file:///src/mallocwatch.git" "$root/build-step.sh" || fail "the build step clones no URL to replace"
chroot "$root" sh -ec 'sudo() { "$@"; }; rm -rf /tmp/mallocwatch; . /build-step.sh' \
	>"$dir/build.log" 2>&1 || fail "the build step in the bare root (see $dir/build.log): $(tail -5 "$dir/build.log")"
[ -x "$root/usr/local/bin/mallocwatch" ] || fail "the build step installed no mallocwatch"
say "   built and installed with the job's packages alone"

# 3. the program and the check, here, with the clone's mallocwatch
say "3. the check step, here: a baseline of 2 threads, then 4"
clone=$dir/clone
git clone -q "$top" "$clone" && make -s -C "$clone" all >"$dir/host-build.log" 2>&1 ||
	fail "the clone does not build here (see $dir/host-build.log)"
proj=$dir/project
mkdir -p "$proj" && cp examples/ci/mallocwatch.mk examples/arena-storm.c "$proj/" || exit 1
printf 'app: arena-storm.c\n\t$(CC) -O2 -pthread -o app arena-storm.c\n\ninclude mallocwatch.mk\n' \
	>"$proj/Makefile"
export MW="$clone/build/mallocwatch" MW_REPEAT=1
(cd "$proj" && sh -e "$(step "Build the program")") >"$dir/app.log" 2>&1 || fail "make app (see $dir/app.log)"
(cd "$proj" && make -s mallocwatch-baseline MW_RUN='./app 2 5' >/dev/null) || fail "the baseline"
: >"$dir/summary.md"
(cd "$proj" && GITHUB_STEP_SUMMARY="$dir/summary.md" MW_RUN='./app 4 5' \
	sh -c 'sudo() { "$@"; }; . "$1"' sh "$(step "Check arenas")") >"$dir/check.log" 2>&1
rc=$?
[ $rc != 0 ] || fail "the check step passed; 4 threads make more arenas than 2: $(cat "$dir/check.log")"
grep -q "^::error title=mallocwatch::FAIL arenas 5, limit <= 3 (baseline 3, rule 'arenas<=+0')" \
	"$dir/check.log" || fail "no ::error annotation for arenas: $(cat "$dir/check.log")"
grep -q '^| \*\*FAIL\*\* | `arenas<=+0` | 5 | <= 3 | 3 |' "$dir/summary.md" ||
	fail "no row in the step summary: $(cat "$dir/summary.md")"
[ -s "$proj/mallocwatch-report.json" ] || fail "no mallocwatch-report.json for the artifact step"
say "   the check step failed as it should (make exited $rc): the annotation, the summary's table, the report"
say "ok: every step of $yml did what the job expects"
