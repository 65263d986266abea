# Helpers for the CLI test scripts (sourced): `check NAME COND CMD...` runs CMD
# under xvfb-run and evaluates the Python condition COND over its JSON output
# `j`; `check_rc NAME RC CMD...` wants exit status RC. Both count into
# $pass / $fail.
pass=0 fail=0

# xvfb-run's own failures are the harness's, not the command's: 5 when it
# cannot remove its temp dir after the command ran (its exit status then
# replaces the command's: seen three tries running on "unknown input name
# exits 1" in two sanitized CI runs), 6 when Xvfb did not start. The command
# writes its own status to a file, which is taken where xvfb-run said 5 or
# 6 after the command ran; where it never ran, the run is tried again, up to
# three times in all.
xrun() {
    local out rc try st
    st=$(mktemp)
    for try in 1 2 3; do
        : >"$st"
        out=$(xvfb-run -a bash -c '"$@"; s=$?; echo $s >"$0"; exit $s' "$st" "$@")
        rc=$?
        [[ $rc -eq 5 || $rc -eq 6 ]] || break
        if [[ -s $st ]]; then
            rc=$(<"$st")
            break
        fi
    done
    rm -f "$st"
    printf '%s\n' "$out"
    return $rc
}
check() { # name, python condition over `j` (the JSON), command...
    local name=$1 cond=$2
    shift 2
    local out
    out=$(xrun "$@" 2>/dev/null)
    if python3 -c "import json,sys; j=json.loads(sys.argv[1]); sys.exit(0 if ($cond) else 1)" "$out" 2>/dev/null; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: $cond"
        echo "  output: $out"
    fi
}
check_rc() { # name, wanted exit code, command...
    local name=$1 want=$2
    shift 2
    xrun "$@" >/dev/null 2>&1
    local rc=$?
    if [[ $rc -eq $want ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name: exit $rc, want $want"; fi
}
