#!/usr/bin/env bash
# A one-node SLURM on this machine, for trying profiles/slurm and for tests/test_cluster.py.
#
#   scripts/slurm_local.sh start    install SLURM and munge if missing, configure, start, wait for the node
#   scripts/slurm_local.sh stop     stop the daemons this script started
#   scripts/slurm_local.sh status   say whether it runs
#
# Needs root (apt-get and the daemons). Everything it writes lives in one folder,
# $MMINFER_SLURM_DIR (default /tmp/mminfer-slurm; no spaces, slurm.conf cannot quote them): slurm.conf,
# the munge key and socket, logs, spool and pid files. The one thing outside it is the link /etc/slurm/slurm.conf -> that folder's
# slurm.conf, so that sinfo, sbatch, squeue and srun find the cluster without SLURM_CONF; it is made
# only where no slurm.conf exists, and stop removes it.
#
# The cluster: SLURM 22.05 from Debian's packages, no accounting database (sacct does not work; job
# status comes from squeue, which keeps a finished job for MinJobAge seconds), one node with this
# machine's hostname, CPUs and memory, in the partition named by MMINFER_SLURM_PARTITION (default
# "cpu", the partition of profiles/slurm). start waits MMINFER_SLURM_WAIT seconds (default 60) for
# the node to be idle; a second start while it runs says so and changes nothing.
set -euo pipefail

STATE="${MMINFER_SLURM_DIR:-/tmp/mminfer-slurm}"
PARTITION="${MMINFER_SLURM_PARTITION:-cpu}"
WAIT_SECONDS="${MMINFER_SLURM_WAIT:-60}"
MIN_JOB_AGE=3600 # seconds squeue keeps a finished job (the status check reads it there)
ETC_CONF=/etc/slurm/slurm.conf
CONF="$STATE/slurm.conf"
MUNGE="$STATE/munge"
SOCKET="$MUNGE/munge.socket.2"
PACKAGES=(slurmctld slurmd slurm-client munge)

say() { printf 'slurm_local: %s\n' "$*"; }
die() {
    printf 'slurm_local: error: %s\n' "$*" >&2
    exit 1
}

[[ "$STATE" == /* && "$STATE" != *[[:space:]]* ]] ||
    die "MMINFER_SLURM_DIR must be an absolute path without spaces (slurm.conf cannot quote them): '$STATE'"

alive() { # alive NAME PIDFILE: the pid file names a running process called NAME (not a reused pid)
    local name="$1" pidfile="$2" pid
    [[ -s "$pidfile" ]] || return 1
    pid="$(cat "$pidfile")"
    [[ "$pid" =~ ^[0-9]+$ ]] && [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == "$name" ]]
}

running() {
    alive munged "$MUNGE/munged.pid" && alive slurmctld "$STATE/slurmctld.pid" &&
        alive slurmd "$STATE/slurmd.pid"
}

node_state() { sinfo --noheader --partition "$PARTITION" --Node --format '%t' 2>/dev/null | head -n 1 || true; }

install_packages() {
    local missing=() package
    for package in "${PACKAGES[@]}"; do
        dpkg-query --show --showformat '${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$package")
    done
    if ((${#missing[@]} == 0)); then
        say "packages present: ${PACKAGES[*]}"
        return
    fi
    command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get to install them"
    say "installing ${missing[*]} with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

make_munge_key() {
    # munged wants its socket's folder (and every folder above) searchable by all, and not writable by
    # others; the key itself stays readable by munge alone
    mkdir -p "$MUNGE"
    chmod 0755 "$STATE"
    chown munge:munge "$MUNGE"
    chmod 0755 "$MUNGE"
    if [[ -s "$MUNGE/munge.key" ]]; then
        say "munge key present: $MUNGE/munge.key"
        return
    fi
    say "making a munge key: $MUNGE/munge.key"
    mungekey --create --keyfile "$MUNGE/munge.key"
    chown munge:munge "$MUNGE/munge.key"
    chmod 0400 "$MUNGE/munge.key"
}

write_conf() {
    local host node cpus memory
    host="$(hostname -s)"
    # slurmd -C prints this machine's node line:
    #   NodeName=<host> CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=24105
    node="$(slurmd -C | head -n 1)"
    cpus="$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$node")"
    memory="$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$node")"
    [[ -n "$cpus" && -n "$memory" ]] || die "could not read CPUs and memory from 'slurmd -C': $node"
    memory=$((memory * 95 / 100)) # leave the system some room
    node="$(sed "s/^NodeName=[^ ]*/NodeName=$host/; s/ RealMemory=[0-9]*/ RealMemory=$memory/" <<<"$node")"
    ((memory >= 8000)) ||
        say "warning: $memory MB for jobs; the demo's training jobs ask for 8000 MB and would never start"
    say "writing $CONF: node $host, $cpus CPUs, $memory MB, partition $PARTITION, no accounting"
    mkdir -p "$STATE/log" "$STATE/spool/slurmctld" "$STATE/spool/slurmd"
    cat >"$CONF" <<EOF
# Written by scripts/slurm_local.sh: a one-node SLURM without accounting.
ClusterName=mminfer
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$STATE/spool/slurmctld
SlurmdSpoolDir=$STATE/spool/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# squeue keeps a finished job this long: profiles/slurm reads job status with squeue
MinJobAge=$MIN_JOB_AGE
$node State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

link_conf() {
    if [[ -L "$ETC_CONF" && "$(readlink "$ETC_CONF")" == "$CONF" ]]; then
        return
    fi
    [[ -e "$ETC_CONF" || -L "$ETC_CONF" ]] &&
        die "$ETC_CONF exists and is not this script's: a SLURM is configured here already; not touching it"
    say "linking $ETC_CONF -> $CONF"
    mkdir -p "$(dirname "$ETC_CONF")"
    ln -s "$CONF" "$ETC_CONF"
}

show_logs() {
    local log
    for log in "$MUNGE/munged.log" "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log"; do
        [[ -f "$log" ]] || continue
        printf -- '--- last lines of %s\n' "$log" >&2
        tail -n 15 "$log" >&2
    done
}

start() {
    [[ "$(id -u)" == 0 ]] || die "start needs root (apt-get, munged, slurmctld, slurmd)"
    if running; then
        say "already running (state in $STATE; node $(node_state))"
        exit 0
    fi
    if alive munged "$MUNGE/munged.pid" || alive slurmctld "$STATE/slurmctld.pid" ||
        alive slurmd "$STATE/slurmd.pid"; then
        say "some daemons of an earlier start still run: stopping them first"
        stop
    fi
    install_packages
    mkdir -p "$STATE"
    make_munge_key
    write_conf
    link_conf

    say "starting munged (socket $SOCKET)"
    runuser -u munge -- munged --socket="$SOCKET" --key-file="$MUNGE/munge.key" \
        --pid-file="$MUNGE/munged.pid" --log-file="$MUNGE/munged.log" --seed-file="$MUNGE/munged.seed"
    say "starting slurmctld"
    slurmctld -f "$CONF"
    say "starting slurmd"
    slurmd -f "$CONF"

    say "waiting up to $WAIT_SECONDS s for the node to be idle"
    local waited=0 state=""
    while ((waited < WAIT_SECONDS)); do
        state="$(node_state)"
        if [[ "$state" == idle ]]; then
            say "up: partition $PARTITION, node $(hostname -s) idle (state in $STATE; stop with: $0 stop)"
            return
        fi
        sleep 1
        waited=$((waited + 1))
    done
    show_logs
    say "the node is not idle after $WAIT_SECONDS s: stopping the daemons again"
    stop
    die "no idle node after $WAIT_SECONDS s (state: '${state:-no answer from sinfo}'); logs above and in $STATE/log"
}

stop_daemon() { # stop_daemon NAME PIDFILE
    local name="$1" pidfile="$2" pid waited=0
    if ! alive "$name" "$pidfile"; then
        say "$name is not running"
        rm -f "$pidfile"
        return
    fi
    pid="$(cat "$pidfile")"
    say "stopping $name (pid $pid)"
    kill "$pid"
    while kill -0 "$pid" 2>/dev/null && ((waited < 20)); do
        sleep 0.5
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "$name did not stop in 10 s: killing it"
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

cancel_jobs() { # jobs still queued or running would outlive slurmd (their processes) otherwise
    local jobs
    alive slurmctld "$STATE/slurmctld.pid" || return 0
    jobs="$(squeue --noheader --states=PENDING,RUNNING,SUSPENDED,CONFIGURING --format=%i 2>/dev/null || true)"
    [[ -n "$jobs" ]] || return 0
    say "cancelling the jobs still queued or running: $(tr '\n' ' ' <<<"$jobs")"
    # shellcheck disable=SC2086 # one argument per job id
    scancel $jobs || true
    sleep 2
}

stop() {
    cancel_jobs
    stop_daemon slurmd "$STATE/slurmd.pid"
    stop_daemon slurmctld "$STATE/slurmctld.pid"
    stop_daemon munged "$MUNGE/munged.pid"
    if [[ -L "$ETC_CONF" && "$(readlink "$ETC_CONF")" == "$CONF" ]]; then
        say "removing the link $ETC_CONF"
        rm -f "$ETC_CONF"
    fi
}

status() {
    if running; then
        say "running (state in $STATE; node $(node_state))"
    else
        say "not running"
        exit 1
    fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
    printf 'usage: %s start|stop|status\n' "$0" >&2
    exit 2
    ;;
esac
