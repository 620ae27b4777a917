#!/usr/bin/env bash
# A throwaway single-node Slurm cluster on this machine, for development and CI.
#
#   scripts/slurm-dev-cluster.sh start    install (root, if missing), configure, start; print SLURM_CONF
#   scripts/slurm-dev-cluster.sh status   daemons and node state; exit 0 when the node takes jobs
#   scripts/slurm-dev-cluster.sh stop     stop the daemons this script started
#
# Use it with:  eval "$(scripts/slurm-dev-cluster.sh start)"   (sets SLURM_CONF in your shell)
#
# Everything (config, state, spool, logs, pid files) lives under one folder:
# $PTBENCH_SLURM_DIR, default /tmp/ptbench-slurm. The node declares one fake H100
# (gres.conf File=/dev/null) so GPU jobs schedule; the runner then finds no usable GPU
# and reports a retryable `no_gpu` failure, which is the behaviour under test.
# Messages go to stderr; stdout carries only the `export SLURM_CONF=...` line.
set -euo pipefail

DIR=${PTBENCH_SLURM_DIR:-/tmp/ptbench-slurm}
CONF=$DIR/etc/slurm.conf
NODE=$(hostname -s)
CTLD_PORT=${PTBENCH_SLURM_CTLD_PORT:-6817}
SLURMD_PORT=${PTBENCH_SLURM_SLURMD_PORT:-6818}
DBD_PORT=${PTBENCH_SLURM_DBD_PORT:-6819}
DB_PORT=${PTBENCH_SLURM_DB_PORT:-6820}
# Accounting (slurmdbd over a MariaDB under $DIR) when both are installed, as on real clusters: QOS
# and association limits (MaxSubmitJobsPerUser, ...) are enforced and sacct answers. 0 turns it off.
if [[ -z ${PTBENCH_SLURM_ACCOUNTING:-} ]]; then
    command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null && PTBENCH_SLURM_ACCOUNTING=1 || PTBENCH_SLURM_ACCOUNTING=0
fi
# KillWait: seconds between SIGTERM and SIGKILL when Slurm ends a job (time limit, scancel,
# requeue). Long enough for the runner to checkpoint, short enough for tests.
KILL_WAIT=${PTBENCH_SLURM_KILL_WAIT:-15}

say() { echo "slurm-dev-cluster: $*" >&2; }
die() { say "error: $*"; exit 1; }

is_root() { [[ $(id -u) -eq 0 ]]; }

install_packages() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    ((${#missing[@]} == 0)) && return 0
    is_root || die "missing ${missing[*]}; run this script as root once (it installs slurm-wlm and munge with apt-get)"
    say "installing slurm-wlm and munge with apt-get (one time)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >&2
}

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
    if munge_ok; then return 0; fi
    is_root || die "munged is not running and only root can start it"
    if [[ ! -s /etc/munge/munge.key ]]; then
        say "creating /etc/munge/munge.key"
        if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key
        else dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none; fi
    fi
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
    chmod 0700 /etc/munge /var/log/munge
    chmod 0400 /etc/munge/munge.key
    chmod 0755 /run/munge
    runuser -u munge -- /usr/sbin/munged
    touch "$DIR/run/munged.started-by-us"
    for _ in $(seq 50); do munge_ok && return 0; sleep 0.1; done
    die "munged did not start (see /var/log/munge/munged.log)"
}

write_config() {
    local cpus mem_mb
    # nproc obeys OMP_NUM_THREADS (the test suite sets 1 per pytest-xdist worker): count the cores without it
    cpus=${PTBENCH_SLURM_CPUS:-$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)}
    # Leave headroom: slurmd drains a node that reports less memory than configured.
    mem_mb=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
    mkdir -p "$DIR"/{etc,state,spool,log,run}
    cat >"$CONF.new" <<EOF
# Written by scripts/slurm-dev-cluster.sh; regenerated on every start.
ClusterName=ptbench-dev
SlurmctldHost=$NODE
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
$(accounting_lines)
JobCompType=jobcomp/none
SchedulerType=sched/backfill
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
PlugStackConfig=$DIR/etc/plugstack.conf
ReturnToService=2
KillWait=$KILL_WAIT
# Finished jobs stay visible to squeue for MinJobAge (default 300 s): status needs them.
# Slurm's own defaults, as on a cluster nobody tuned: an array has at most 1001 tasks (indexes
# 0..1000) and the controller holds at most 10000 jobs, so the suite meets the limits users meet.
MaxArraySize=${PTBENCH_SLURM_MAX_ARRAY_SIZE:-1001}
MaxJobCount=${PTBENCH_SLURM_MAX_JOB_COUNT:-10000}
SlurmdParameters=config_overrides
GresTypes=gpu
DefMemPerCPU=$((mem_mb / cpus / 2))
NodeName=$NODE CPUs=$cpus RealMemory=$mem_mb Gres=gpu:h100:1 State=UNKNOWN
# OverSubscribe=YES: only jobs that ask (sbatch --oversubscribe) share a CPU; the tool-server
# replica test runs 3 replicas and a shard on a 2-CPU node that way. Others are unaffected.
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
    [[ ${1:-} == check ]] && return 0  # leave $CONF.new for config_changed
    mv "$CONF.new" "$CONF"
    cat >"$DIR/etc/gres.conf" <<EOF
# A GPU without hardware: jobs asking for gpu:h100 schedule, and find no usable GPU on the node.
AutoDetect=off
NodeName=$NODE Name=gpu Type=h100 File=/dev/null
EOF
    : >"$DIR/etc/plugstack.conf"
}

# The running cluster's config differs from what this script writes (an older script started it):
# `start` restarts the daemons with the new one (jobs survive in StateSaveLocation).
config_changed() {
    [[ -s $CONF ]] || return 1
    write_config check
    ! cmp -s "$CONF" "$CONF.new"
}

accounting_lines() {
    if [[ $PTBENCH_SLURM_ACCOUNTING == 1 ]]; then
        echo "AccountingStorageType=accounting_storage/slurmdbd"
        echo "AccountingStorageHost=$NODE"
        echo "AccountingStoragePort=$DBD_PORT"
        echo "AccountingStorageEnforce=associations,limits,qos"
    else
        echo "AccountingStorageType=accounting_storage/none"
    fi
}

sql() { mariadb --no-defaults --socket="$DIR/run/mysql.sock" -u root -N -e "$1"; }

# MariaDB (its own datadir, loopback only) and slurmdbd; the cluster, an account and the users who
# submit here (root and $SUDO_USER) registered, so associations are enforced as on a real cluster.
# Runs on every start: an existing database keeps its records; what is missing is added.
start_accounting() {
    [[ $PTBENCH_SLURM_ACCOUNTING == 1 ]] || return 0
    mkdir -p "$DIR/mysql"
    if [[ ! -d $DIR/mysql/mysql ]]; then
        say "creating the accounting database in $DIR/mysql (one time)"
        mariadb-install-db --no-defaults --user=root --datadir="$DIR/mysql" --auth-root-authentication-method=socket \
            --skip-test-db >"$DIR/log/mysql-install.log" 2>&1 || die "mariadb-install-db failed; see $DIR/log/mysql-install.log"
    fi
    if ! pid_alive "$DIR/run/mysqld.pid"; then
        setsid mariadbd --no-defaults --user=root --datadir="$DIR/mysql" --socket="$DIR/run/mysql.sock" \
            --pid-file="$DIR/run/mysqld.pid" --bind-address=127.0.0.1 --port="$DB_PORT" \
            --log-error="$DIR/log/mysqld.log" --innodb-buffer-pool-size=32M </dev/null >/dev/null 2>&1 &
        for _ in $(seq 100); do sql "select 1" >/dev/null 2>&1 && break; sleep 0.2; done
        sql "select 1" >/dev/null 2>&1 || die "MariaDB did not start; see $DIR/log/mysqld.log"
    fi
    local conf=$DIR/etc/slurmdbd.conf pass
    if [[ ! -s $conf ]]; then
        pass=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
        sql "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass'; ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
        ( umask 077; cat >"$conf.tmp" <<EOF
# Written by scripts/slurm-dev-cluster.sh (a throwaway local database; the password is random).
AuthType=auth/munge
DbdHost=$NODE
DbdPort=$DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
PidFile=$DIR/run/slurmdbd.pid
LogFile=$DIR/log/slurmdbd.log
EOF
        )
        mv "$conf.tmp" "$conf"
    fi
    if ! pid_alive "$DIR/run/slurmdbd.pid"; then
        SLURM_CONF=$CONF slurmdbd
        for _ in $(seq 100); do SLURM_CONF=$CONF sacctmgr -n show cluster >/dev/null 2>&1 && break; sleep 0.2; done
    fi
    SLURM_CONF=$CONF sacctmgr -n show cluster >/dev/null 2>&1 || die "slurmdbd did not come up; see $DIR/log/slurmdbd.log"
    local users="root ${SUDO_USER:-}"
    SLURM_CONF=$CONF sacctmgr -n -P show cluster format=cluster | grep -qx ptbench-dev \
        || SLURM_CONF=$CONF sacctmgr -i add cluster ptbench-dev >/dev/null
    # ptbench: everyone's default; ptbench-test: the account the tests name in backend.options
    local a u
    for a in ptbench ptbench-test; do
        SLURM_CONF=$CONF sacctmgr -n -P show account format=account | grep -qx "$a" \
            || SLURM_CONF=$CONF sacctmgr -i add account "$a" description=dev organization=ptbench >/dev/null
        for u in $users; do
            SLURM_CONF=$CONF sacctmgr -n -P show assoc where user="$u" account="$a" format=user | grep -qx "$u" \
                || SLURM_CONF=$CONF sacctmgr -i add user "$u" account="$a" >/dev/null
        done
    done
    for u in $users; do SLURM_CONF=$CONF sacctmgr -i modify user "$u" set defaultaccount=ptbench >/dev/null || true; done
}

pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

ctld_up() { SLURM_CONF=$CONF scontrol ping 2>/dev/null | grep -q "is UP"; }

node_state() { SLURM_CONF=$CONF sinfo -h -N -n "$NODE" -o %T 2>/dev/null | head -1; }

start() {
    install_packages
    mkdir -p "$DIR/run"
    if pid_alive "$DIR/run/slurmctld.pid" && pid_alive "$DIR/run/slurmd.pid" && ctld_up && config_changed; then
        is_root || die "the running cluster's config is out of date and only root can restart it (sudo $0 start)"
        say "config changed ($(diff "$CONF" "$CONF.new" | grep '^>' | cut -c3- | tr '\n' ' ')); restarting the daemons"
        stop
    fi
    if pid_alive "$DIR/run/slurmctld.pid" && pid_alive "$DIR/run/slurmd.pid" && ctld_up; then
        say "already running ($DIR)"
        start_accounting  # idempotent: adds what an older script did not register
    else
        is_root || die "slurmctld and slurmd must be started as root (sudo $0 start)"
        write_config
        start_munge
        start_accounting
        pid_alive "$DIR/run/slurmctld.pid" || slurmctld -f "$CONF"
        for _ in $(seq 100); do ctld_up && break; sleep 0.2; done
        ctld_up || die "slurmctld did not come up; see $DIR/log/slurmctld.log"
        pid_alive "$DIR/run/slurmd.pid" || slurmd -f "$CONF"
    fi
    local st=""
    for i in $(seq 150); do
        st=$(node_state)
        case $st in
            idle*|mixed*|allocated*) break ;;
            down*|drain*) ((i % 10 == 1)) && SLURM_CONF=$CONF scontrol update nodename="$NODE" state=resume 2>/dev/null || true ;;
        esac
        sleep 0.2
    done
    case $st in idle*|mixed*|allocated*) ;; *) die "node $NODE is '${st:-unknown}', not idle; see $DIR/log/slurmd.log" ;; esac
    say "node $NODE is $st; config $CONF"
    echo "export SLURM_CONF=$CONF"
}

stop() {
    local f
    for f in slurmd slurmctld slurmdbd mysqld; do
        if pid_alive "$DIR/run/$f.pid"; then
            kill "$(cat "$DIR/run/$f.pid")"
            for _ in $(seq 50); do pid_alive "$DIR/run/$f.pid" || break; sleep 0.2; done
            say "stopped $f"
        fi
    done
    if [[ -e $DIR/run/munged.started-by-us ]] && [[ -s /run/munge/munged.pid ]]; then
        kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
        rm -f "$DIR/run/munged.started-by-us"
        say "stopped munged"
    fi
}

status() {
    local ok=0
    pid_alive "$DIR/run/slurmctld.pid" && say "slurmctld running (pid $(cat "$DIR/run/slurmctld.pid"))" || { say "slurmctld not running"; ok=1; }
    pid_alive "$DIR/run/slurmd.pid" && say "slurmd running (pid $(cat "$DIR/run/slurmd.pid"))" || { say "slurmd not running"; ok=1; }
    munge_ok && say "munge ok" || { say "munge not working"; ok=1; }
    if ((ok == 0)) && config_changed; then say "config out of date: \`$0 start\` restarts with the new one"; ok=1; fi
    if ((ok == 0)); then
        say "node $NODE: $(node_state)"
        echo "export SLURM_CONF=$CONF"
    fi
    return $ok
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status   (state in \$PTBENCH_SLURM_DIR, default /tmp/ptbench-slurm)" >&2; exit 2 ;;
esac
