//! A real Slurm on one host, started by the tests themselves from Debian's packages: a
//! private munged, optionally MariaDB + slurmdbd, slurmctld, and one slurmd per emulated node
//! (Debian builds Slurm with MULTIPLE_SLURMD, so each node gets its own port on 127.0.0.1, and
//! `SlurmdParameters=config_overrides` lets a small VM claim the inventory's cores and GPUs;
//! gres.conf device files point at /dev/null, which slurmd accepts as a character device).
//!
//! With [`Options::root`] the same cluster runs inside a Debian root made by `debootstrap`
//! (Debian 13 trixie's Slurm 24.11, see .ci/run): every daemon and client command is
//! `unshare --mount` + a private bind of /proc + `chroot ROOT env -i ...`, and the temp dir
//! lives under `ROOT/srv/`, so a path is the host path minus the root prefix. The /proc bind
//! exists only in each command's own mount namespace, so nothing is left mounted on the host.
//!
//! Invariants: the generated policy files are used as they are, except for what only a
//! one-host emulation needs (`NodeHostname`/`NodeAddr`/`Port` appended to NodeName lines,
//! device paths moved under the temp dir); the site part (paths, ports, auth) is a header that
//! `Include`s the policy part, exactly as an admin would deploy it. Every daemon is stopped by
//! its own pid when the [`Cluster`] is dropped, and nothing outside its temp dir is touched.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use placid_lang::model::{Model, PreemptMode, Preemption};
use placid_lang::units::Money;
use placid_targets::slurm::site;

/// Log lines slurmctld and the slurmds print on a healthy one-host start (missing state files
/// at first start, no PMIx library, no memory cgroup, VM timer noise, slurmdbd's tuning
/// advice): left out of the log checks, and of a failed start's report so that the line that
/// matters shows.
const BENIGN_LOG_LINES: &[&str] = &[
    "state file",
    "backup state save",
    "Trying backup",
    "pmix",
    "mpi/pmix",
    "_read_last_decay_ran",
    "Database settings not recommended",
    "High latency for 1000 calls to gettimeofday",
    "MemSpecLimit",
];

/// What the one-host site's own slurm.conf sets in the keys the policy adds items to
/// (site-requirements.conf): the live tests check both survive the merge and the include.
pub const SITE_OWN_SETTINGS: &[(&str, &str)] =
    &[("SchedulerParameters", "bf_max_job_user=50,default_queue_depth=200"), ("SlurmctldParameters", "idle_on_node_suspend")];

/// The PATH of every command inside a root (`env -i` drops the host environment).
const ROOT_PATH: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

/// Where .ci/run copies the host's (Debian 12) libmariadb.so.3 into the root, for slurmdbd:
/// with trixie's own libmariadb3 (1:11.8.9+ds-0+deb13u1), slurmdbd 24.11.5 cannot read any
/// result set and exits at start ("error: mysql_query failed: 5027 Number of columns in result
/// (=1) set execeeds maxmimum allowed number of columns (=0)" on `select @var := concat('')`),
/// while the same query works from trixie's `mariadb` client and the Debian 12 library works
/// with the trixie server. Only the client library is swapped; Slurm and MariaDB stay trixie's.
const ROOT_LIBMARIADB: &str = "/opt/placid-libmariadb";

/// The debootstrap'ed trixie root: `$PLACID_TRIXIE_ROOT`, or where .ci/run makes it.
pub fn trixie_root() -> PathBuf {
    std::env::var_os("PLACID_TRIXIE_ROOT").map_or_else(|| PathBuf::from("/var/tmp/placid-trixie-root"), PathBuf::from)
}

/// Why the live tests cannot run here: not root, a Debian package is missing, or (with
/// `root`) the chroot root or a program in it is missing.
pub fn unavailable_reason(with_accounting: bool, root: Option<&Path>) -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok().map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned());
    if uid.as_deref() != Some("0") {
        return Some("not running as root (the daemons need it)".to_owned());
    }
    let mut programs = vec!["munged", "mungekey", "slurmctld", "slurmd", "scontrol", "sinfo", "sbatch", "squeue", "scancel"];
    if with_accounting {
        programs.extend(["slurmdbd", "sacctmgr", "mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin"]);
    }
    let Some(root) = root else {
        let missing: Vec<&str> = programs.into_iter().filter(|program| which(program).is_none()).collect();
        return (!missing.is_empty()).then(|| format!("missing programs {missing:?} (install the packages .ci/run lists)"));
    };
    let host_missing: Vec<&str> = ["unshare", "mount", "chroot"].into_iter().filter(|program| which(program).is_none()).collect();
    if !host_missing.is_empty() {
        return Some(format!("missing host programs {host_missing:?}"));
    }
    let in_root = |program: &str| ["usr/sbin", "usr/bin"].iter().any(|dir| root.join(dir).join(program).exists());
    let missing: Vec<&str> = programs.into_iter().filter(|program| !in_root(program)).collect();
    let libmariadb = root.join(ROOT_LIBMARIADB.trim_start_matches('/')).join("libmariadb.so.3");
    if with_accounting && !libmariadb.is_file() {
        return Some(format!("the root {} lacks {} (.ci/run copies it)", root.display(), libmariadb.display()));
    }
    if !missing.is_empty() || !root.join("etc/hosts").is_file() {
        return Some(format!("the root {} is not made, or lacks {missing:?} or etc/hosts (.ci/run makes it)", root.display()));
    }
    None
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/sbin"].map(PathBuf::from));
    dirs.into_iter().map(|dir| dir.join(program)).find(|candidate| candidate.is_file())
}

/// Under `CI=true` a missing prerequisite fails the test; elsewhere it prints NOT RUN and
/// the test returns early. Returns whether the test should go on.
pub fn should_run(test: &str, with_accounting: bool, root: Option<&Path>) -> bool {
    let Some(reason) = unavailable_reason(with_accounting, root) else { return true };
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{test}: cannot start Slurm: {reason}");
    }
    eprintln!("{test}: NOT RUN: cannot start Slurm: {reason}");
    false
}

/// The cluster example with three changes that keep a live run short, and nothing else:
/// preemption windows are seconds instead of minutes (P1 10 s, P2 5 s, no exempt time), team
/// `research` gets a budget of (usd)0.25 a day so that one small job fits and a second does
/// not, and plan asr-sweep's sweep has 4 trials of which the top 2 go on to 2 finalists.
pub fn test_model() -> Model {
    let mut model = crate::build_clean("cluster").model.into_model();
    shorten_for_live(&mut model);
    model
}

/// [`test_model`]'s changes, for any model of the cluster example. The policy's own `test`
/// blocks are dropped: they describe the example's real windows and budgets, and the checker
/// rightly refuses those a tiny budget makes impossible.
pub fn shorten_for_live(model: &mut Model) {
    model.tests.clear();
    for tier in &mut model.tiers {
        if let Preemption::Window { mode, .. } = tier.preemption.value {
            let seconds = if mode == PreemptMode::Requeue { 10 } else { 5 };
            tier.preemption.value = Preemption::Window { window: placid_lang::units::Duration { seconds }, mode };
            tier.exempt = None;
        }
    }
    for plan in model.plans.iter_mut().filter(|plan| plan.name.as_str() == "asr-sweep") {
        for stage in &mut plan.stages {
            stage.trials = stage.trials.min(if stage.promote.is_some() { 4 } else { 2 });
            if let Some(promote) = stage.promote.as_mut() {
                promote.top = 2;
            }
        }
    }
    for team in &mut model.teams {
        if team.name.as_str() == "research"
            && let Some(budget) = team.daily_budget.as_mut()
        {
            budget.value = Money { currency: budget.value.currency, minor: 25 };
        }
    }
}

/// Writes the Slurm artifacts of `model`, checked first, into `dir` (without the `slurm/`
/// prefix).
pub fn write_slurm(model: &Model, dir: &Path) {
    let artifacts = placid_targets::slurm::emit(&crate::checked(model.clone())).unwrap_or_else(|errors| panic!("emit failed: {errors:?}"));
    for artifact in artifacts {
        let path = dir.join(artifact.path.trim_start_matches("slurm/"));
        std::fs::create_dir_all(path.parent().unwrap_or(dir)).expect("create dir");
        std::fs::write(path, artifact.bytes).expect("write artifact");
    }
}

/// How to start a cluster.
#[derive(Clone, Debug)]
pub struct Options {
    /// Start MariaDB + slurmdbd and apply `accounts.sh` (twice, to prove it idempotent).
    pub accounting: bool,
    /// Start one slurmd per node and wait until all are idle.
    pub slurmds: bool,
    /// Run every daemon and command chrooted into this root instead of from the host.
    pub root: Option<PathBuf>,
}

/// A running one-host Slurm.
pub struct Cluster {
    dir: tempfile::TempDir,
    root: Option<PathBuf>,
    daemons: Vec<(String, Child)>,
    ports: PortBlock,
    /// Emulated node names, in slurm.conf order.
    pub nodes: Vec<String>,
    /// Output of each accounts.sh run (stdout + stderr).
    pub accounts_runs: Vec<Output>,
}

/// Why a cluster did not come up: the config was refused, or the harness itself failed.
#[derive(Debug)]
pub enum StartError {
    /// slurmctld exited: the configuration was rejected. Holds its output.
    Rejected(String),
    /// Something else went wrong (a daemon did not start).
    Harness(String),
}

fn harness(message: impl Into<String>) -> StartError {
    StartError::Harness(message.into())
}

impl Cluster {
    /// Starts a cluster on the generated `slurm/` directory `policy`.
    pub fn start(policy: &Path, options: &Options) -> Result<Cluster, StartError> {
        let parent = options.root.as_ref().map_or_else(std::env::temp_dir, |root| root.join("srv"));
        let dir = tempfile::Builder::new().prefix("placid-slurm-").tempdir_in(parent).map_err(|error| harness(error.to_string()))?;
        let ports = PortBlock::reserve()?;
        let mut cluster =
            Cluster { dir, root: options.root.clone(), daemons: Vec::new(), ports, nodes: Vec::new(), accounts_runs: Vec::new() };
        for dir in ["etc", "run", "munge", "log", "state", "spool", "dev", "mysql", "jobs"] {
            std::fs::create_dir_all(cluster.path(dir)).map_err(|error| harness(error.to_string()))?;
        }
        cluster.chmod("munge", "700")?;
        // munged refuses a socket directory that is not world-executable.
        cluster.chmod("run", "755")?;
        cluster.chmod(".", "755")?;
        cluster.localize(policy, options)?;
        cluster.start_munge()?;
        if options.accounting {
            cluster.start_database()?;
            cluster.start_slurmdbd()?;
        }
        cluster.start_slurmctld()?;
        if options.accounting {
            // A first deployment's order: slurmctld registers the cluster and its
            // AccountingStorageTRES (gres/gpu, which a QOS's GrpTRES=gres/gpu= names) with
            // slurmdbd; then accounts.sh makes the QOS; then slurmctld restarts to resolve the
            // partitions' AllowQos. The bootstrap start's log (which says those QOS are
            // missing) is kept aside, so the log checks see the deployed cluster only.
            cluster.apply_accounts(policy)?;
            cluster.stop_daemon("slurmctld");
            std::fs::rename(cluster.path("log/slurmctld.log"), cluster.path("log/slurmctld.bootstrap.log"))
                .map_err(|error| harness(error.to_string()))?;
            cluster.start_slurmctld()?;
        }
        if options.slurmds {
            cluster.start_slurmds()?;
        }
        Ok(cluster)
    }

    /// A path inside the cluster's temp dir, as this process sees it.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// The same path as the daemons and jobs see it (inside the root, if any).
    pub fn inner(&self, relative: &str) -> PathBuf {
        let path = self.path(relative);
        match self.root.as_deref().and_then(|root| path.strip_prefix(root).ok()) {
            Some(inside) => Path::new("/").join(inside),
            None => path,
        }
    }

    /// A command that runs `program` against this cluster, from the host or inside the root.
    fn command(&self, program: &str) -> Command {
        self.command_with_env(program, &[])
    }

    /// [`Self::command`] with extra environment variables (`env -i` would drop `Command::env`'s).
    fn command_with_env(&self, program: &str, env: &[(&str, &str)]) -> Command {
        let conf = self.inner("etc/slurm.conf");
        let Some(root) = &self.root else {
            let mut command = Command::new(program);
            command.env("SLURM_CONF", conf).envs(env.iter().copied());
            return command;
        };
        // unshare, sh, chroot and env all exec, so the child's pid is the program's own.
        let mut command = Command::new("unshare");
        command
            .args(["--mount", "--propagation", "private", "sh", "-c", r#"mount --bind /proc "$0/proc" && exec chroot "$0" "$@""#])
            .arg(root)
            .args(["/usr/bin/env", "-i", &format!("PATH={ROOT_PATH}"), "HOME=/root"])
            .arg(format!("SLURM_CONF={}", conf.display()))
            .args(env.iter().map(|(key, value)| format!("{key}={value}")))
            .arg(program);
        command
    }

    fn chmod(&self, relative: &str, mode: &str) -> Result<(), StartError> {
        let status = Command::new("chmod").arg(mode).arg(self.path(relative)).status().map_err(|error| harness(error.to_string()))?;
        if status.success() { Ok(()) } else { Err(harness(format!("chmod {mode} {relative} failed"))) }
    }

    /// The `PATH` of this cluster's commands with `dir` (a path as the cluster sees it) first.
    pub fn path_with(&self, dir: &Path) -> String {
        let rest = match &self.root {
            Some(_) => ROOT_PATH.to_owned(),
            None => std::env::var("PATH").unwrap_or_else(|_| ROOT_PATH.to_owned()),
        };
        format!("{}:{rest}", dir.display())
    }

    /// Runs `program` against this cluster with extra environment variables.
    pub fn run_with_env(&self, program: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.command_with_env(program, env)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|error| panic!("cannot run {program}: {error}"))
    }

    /// Runs a Slurm client command against this cluster.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program).args(args).stdin(Stdio::null()).output().unwrap_or_else(|error| panic!("cannot run {program}: {error}"))
    }

    /// Runs a client command and returns its stdout, panicking with its stderr on failure.
    pub fn stdout(&self, program: &str, args: &[&str]) -> String {
        let output = self.run(program, args);
        assert!(output.status.success(), "{program} {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// slurmctld's log so far.
    pub fn slurmctld_log(&self) -> String {
        std::fs::read_to_string(self.path("log/slurmctld.log")).unwrap_or_default()
    }

    /// `error:` and `fatal:` lines of slurmctld's log that are not on the benign list.
    pub fn unexpected_log_errors(&self) -> Vec<String> {
        self.slurmctld_log()
            .lines()
            .filter(|line| line.contains("error:") || line.contains("fatal:"))
            .filter(|line| !BENIGN_LOG_LINES.iter().any(|benign| line.contains(benign)))
            .map(str::to_owned)
            .collect()
    }

    fn port(&self, offset: u16) -> u16 {
        self.ports.base + offset
    }

    /// Writes the site header (which `Include`s the policy part), the localized policy part,
    /// topology.conf, gres.conf and job_submit.lua into `etc/`.
    fn localize(&mut self, policy: &Path, options: &Options) -> Result<(), StartError> {
        let read = |name: &str| std::fs::read_to_string(policy.join(name));
        let conf = read("slurm.conf").map_err(|error| harness(format!("no slurm.conf: {error}")))?;
        let host = hostname();
        // slurmctld, slurmdbd and MariaDB below base + 10, then one port per node.
        let nodes = conf.lines().filter(|line| line.starts_with("NodeName=")).count();
        if nodes > usize::from(PORTS_PER_CLUSTER - 10) {
            return Err(harness(format!("{nodes} nodes need more than the {PORTS_PER_CLUSTER} ports a cluster reserves")));
        }
        let mut node_port = self.port(10);
        let mut localized = String::new();
        for line in conf.lines() {
            localized.push_str(line);
            if let Some(name) = line.strip_prefix("NodeName=").and_then(|rest| rest.split_whitespace().next())
                && name != "DEFAULT"
            {
                let _ = write!(localized, " NodeHostname={host} NodeAddr=127.0.0.1 Port={node_port}");
                node_port += 1;
                self.nodes.push(name.to_owned());
            }
            localized.push('\n');
        }
        let etc = self.path("etc");
        let write = |name: &str, text: &str| std::fs::write(etc.join(name), text).map_err(|error| harness(error.to_string()));
        write("placid.conf", &localized)?;
        let root = self.inner("").display().to_string();
        let root = root.trim_end_matches('/');
        let mut site = format!(
            "# One-host site part (what an admin's slurm.conf holds); the policy is included below.\n\
             SlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={ctld}\nSlurmdPort={slurmd}\nSlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={root}/run/munge.sock\n\
             StateSaveLocation={root}/state\nSlurmdSpoolDir={root}/spool/slurmd-%n\n\
             SlurmctldPidFile={root}/run/slurmctld.pid\nSlurmdPidFile={root}/run/slurmd-%n.pid\n\
             SlurmctldLogFile={root}/log/slurmctld.log\nSlurmdLogFile={root}/log/slurmd-%n.log\n\
             SlurmctldDebug=info\nSlurmdDebug=info\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\nMailProg=/bin/true\nSlurmdParameters=config_overrides\nReturnToService=2\n",
            ctld = self.port(0),
            slurmd = self.port(9),
        );
        for (key, value) in SITE_OWN_SETTINGS {
            let _ = writeln!(site, "{key}={value}");
        }
        if options.accounting {
            let _ = write!(
                site,
                "AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\nAccountingStoragePort={}\nAccountingStoragePass={root}/run/munge.sock\n",
                self.port(1)
            );
        }
        let _ = writeln!(site, "Include {}", self.inner("etc/placid.conf").display());
        // As an admin deploys it: the policy's items merged into the site's own keys.
        let requirements = read("site-requirements.conf").map(|text| site::parse(&text)).unwrap_or_default();
        let merged = site::merge(&site, &requirements);
        if !merged.conflicts.is_empty() {
            return Err(harness(format!("the site's slurm.conf conflicts with the policy: {:?}", merged.conflicts)));
        }
        write("slurm.conf", &merged.text)?;
        for name in ["topology.conf", "topology.yaml", "job_submit.lua"] {
            if let Ok(text) = read(name) {
                write(name, &text)?;
            }
        }
        if let Ok(gres) = read("gres.conf") {
            let dev = self.path("dev");
            for device in gres.split_whitespace().filter_map(|word| word.strip_prefix("File=/dev/")) {
                let link = dev.join(device);
                if !link.exists() {
                    std::os::unix::fs::symlink("/dev/null", &link).map_err(|error| harness(error.to_string()))?;
                }
            }
            write("gres.conf", &gres.replace("File=/dev/", &format!("File={}/", self.inner("dev").display())))?;
        }
        if self.root.is_some() {
            // The root has no cgroup filesystem (only /proc is bound), and slurmd 24.11 starts
            // its cgroup plugin even with proctrack/linuxproc and task/none, then exits.
            write("cgroup.conf", "CgroupPlugin=disabled\n")?;
        }
        if options.accounting {
            let slurmdbd = format!(
                "AuthType=auth/munge\nAuthInfo=socket={root}/run/munge.sock\nDbdHost=localhost\nDbdAddr=127.0.0.1\nDbdPort={dbd}\n\
                 SlurmUser=root\nDebugLevel=info\nLogFile={root}/log/slurmdbd.log\nPidFile={root}/run/slurmdbd.pid\n\
                 StorageType=accounting_storage/mysql\nStorageHost=127.0.0.1\nStoragePort={sql}\nStorageUser=slurm\n\
                 StoragePass=placid-test\nStorageLoc=slurm_acct_db\n",
                dbd = self.port(1),
                sql = self.port(2),
            );
            write("slurmdbd.conf", &slurmdbd)?;
            // slurmdbd refuses a config readable by others (it holds the database password).
            self.chmod("etc/slurmdbd.conf", "600")?;
        }
        Ok(())
    }

    fn spawn(&mut self, name: &str, command: &mut Command) -> Result<(), StartError> {
        let log = std::fs::File::create(self.path(&format!("log/{name}.out"))).map_err(|error| harness(error.to_string()))?;
        let err = log.try_clone().map_err(|error| harness(error.to_string()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|error| harness(format!("cannot start {name}: {error}")))?;
        self.daemons.push((name.to_owned(), child));
        Ok(())
    }

    fn output_of(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(&format!("log/{name}.out"))).unwrap_or_default()
    }

    fn start_munge(&mut self) -> Result<(), StartError> {
        let created =
            self.command("mungekey").arg("--create").arg(format!("--keyfile={}", self.inner("munge/munge.key").display())).output();
        if !created.is_ok_and(|output| output.status.success()) {
            return Err(harness("mungekey --create failed"));
        }
        let socket = self.path("run/munge.sock");
        let args = [
            "-F".to_owned(),
            format!("--key-file={}", self.inner("munge/munge.key").display()),
            format!("--socket={}", self.inner("run/munge.sock").display()),
            format!("--pid-file={}", self.inner("run/munged.pid").display()),
            format!("--log-file={}", self.inner("log/munged.log").display()),
            format!("--seed-file={}", self.inner("munge/seed").display()),
        ];
        let mut munged = self.command("munged");
        self.spawn("munged", munged.args(args))?;
        wait_until(Duration::from_secs(10), || socket.exists())
            .then_some(())
            .ok_or_else(|| harness(format!("munged did not start: {}", self.output_of("munged"))))
    }

    fn start_database(&mut self) -> Result<(), StartError> {
        let data = self.inner("mysql/data");
        let install = self
            .command("mariadb-install-db")
            .args(["--no-defaults", "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
            .arg(format!("--datadir={}", data.display()))
            .output()
            .map_err(|error| harness(error.to_string()))?;
        if !install.status.success() {
            return Err(harness(format!("mariadb-install-db failed: {}", String::from_utf8_lossy(&install.stderr))));
        }
        let socket = self.inner("run/mysqld.sock");
        let args = [
            "--no-defaults".to_owned(),
            "--user=root".to_owned(),
            format!("--datadir={}", data.display()),
            format!("--socket={}", socket.display()),
            format!("--port={}", self.port(2)),
            "--bind-address=127.0.0.1".to_owned(),
            "--skip-name-resolve".to_owned(),
            format!("--pid-file={}", self.inner("run/mysqld.pid").display()),
            "--innodb-buffer-pool-size=64M".to_owned(),
        ];
        let mut mariadbd = self.command("mariadbd");
        self.spawn("mariadbd", mariadbd.args(args))?;
        let socket_arg = format!("--socket={}", socket.display());
        let ready = wait_until(Duration::from_secs(30), || {
            self.command("mariadb-admin")
                .args(["--no-defaults", "-uroot", &socket_arg, "ping"])
                .output()
                .is_ok_and(|output| output.status.success())
        });
        if !ready {
            return Err(harness(format!("mariadbd did not start: {}", self.output_of("mariadbd"))));
        }
        let grant = "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'placid-test'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';";
        let output = self
            .command("mariadb")
            .args(["--no-defaults", "-uroot", &socket_arg, "-e", grant])
            .output()
            .map_err(|error| harness(error.to_string()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(harness(format!("mariadb grant failed: {}", String::from_utf8_lossy(&output.stderr))))
        }
    }

    fn start_slurmdbd(&mut self) -> Result<(), StartError> {
        let env: &[(&str, &str)] = if self.root.is_some() { &[("LD_LIBRARY_PATH", ROOT_LIBMARIADB)] } else { &[] };
        let mut slurmdbd = self.command_with_env("slurmdbd", env);
        self.spawn("slurmdbd", slurmdbd.arg("-D"))?;
        let ready = wait_until(Duration::from_secs(30), || self.run("sacctmgr", &["-n", "show", "cluster"]).status.success());
        ready.then_some(()).ok_or_else(|| harness(format!("slurmdbd did not start: {}", self.output_of("slurmdbd"))))
    }

    /// Applies accounts.sh twice (the second run must change nothing), then lets root submit
    /// as every team: user associations are site data, not policy.
    fn apply_accounts(&mut self, policy: &Path) -> Result<(), StartError> {
        std::fs::copy(policy.join("accounts.sh"), self.path("etc/accounts.sh")).map_err(|error| harness(error.to_string()))?;
        for _ in 0..2 {
            let output = self.command("sh").arg(self.inner("etc/accounts.sh")).output().map_err(|error| harness(error.to_string()))?;
            self.accounts_runs.push(output);
        }
        Ok(())
    }

    /// Adds user `root` to `accounts` (the first is its default).
    pub fn add_root_user(&self, accounts: &[String]) {
        let default = format!("DefaultAccount={}", accounts.first().map_or("", String::as_str));
        let account_list = format!("Account={}", accounts.join(","));
        let output = self.run("sacctmgr", &["-i", "add", "user", "root", &account_list, &default]);
        assert!(output.status.success(), "adding root failed: {}", String::from_utf8_lossy(&output.stdout));
    }

    fn start_slurmctld(&mut self) -> Result<(), StartError> {
        // The daemon mode's exit code says nothing (it forks first); -D and polling does.
        let mut slurmctld = self.command("slurmctld");
        self.spawn("slurmctld", slurmctld.arg("-D").arg("-f").arg(self.inner("etc/slurm.conf")))?;
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some((_, child)) = self.daemons.iter_mut().find(|(name, _)| name == "slurmctld")
                && let Ok(Some(status)) = child.try_wait()
            {
                let output = self.output_of("slurmctld");
                self.daemons.retain(|(name, _)| name != "slurmctld");
                return Err(StartError::Rejected(format!("slurmctld exited with {status}:\n{output}")));
            }
            if String::from_utf8_lossy(&self.run("scontrol", &["ping"]).stdout).contains("is UP") {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(harness(format!("slurmctld did not answer: {}", self.output_of("slurmctld"))))
    }

    fn start_slurmds(&mut self) -> Result<(), StartError> {
        let conf = self.inner("etc/slurm.conf");
        for node in self.nodes.clone() {
            std::fs::create_dir_all(self.path(&format!("spool/slurmd-{node}"))).map_err(|error| harness(error.to_string()))?;
            let mut slurmd = self.command("slurmd");
            self.spawn(&format!("slurmd-{node}"), slurmd.arg("-D").arg("-f").arg(&conf).arg("-N").arg(&node))?;
        }
        // Generous for a loaded two-core machine: fifteen slurmds register one by one.
        let ready = wait_until(Duration::from_secs(120), || {
            let idle = String::from_utf8_lossy(&self.run("sinfo", &["-h", "-N", "-t", "idle", "-o", "%N"]).stdout).into_owned();
            let mut idle: Vec<&str> = idle.lines().collect();
            idle.sort_unstable();
            idle.dedup();
            idle.len() >= self.nodes.len()
        });
        if ready {
            return Ok(());
        }
        let exited: Vec<String> = self
            .daemons
            .iter_mut()
            .filter_map(|(name, child)| child.try_wait().ok().flatten().map(|status| format!("{name} exited with {status}")))
            .collect();
        let slurmd_errors: Vec<String> = std::fs::read_dir(self.path("log"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("slurmd-"))
            .flat_map(|entry| {
                let node = entry.file_name().to_string_lossy().into_owned();
                let log = std::fs::read_to_string(entry.path()).unwrap_or_default();
                log.lines().map(|line| format!("{node}: {line}")).collect::<Vec<_>>()
            })
            .filter(|line| line.contains("error") || line.contains("fatal"))
            .filter(|line| !BENIGN_LOG_LINES.iter().any(|benign| line.contains(benign)))
            .take(20)
            .collect();
        Err(harness(format!(
            "not every slurmd became idle:\n{}\nreasons:\n{}\nexited: {}\nslurmd errors:\n{}",
            self.stdout("sinfo", &["-N"]),
            self.stdout("sinfo", &["-R"]),
            if exited.is_empty() { "none".to_owned() } else { exited.join(", ") },
            slurmd_errors.join("\n")
        )))
    }

    /// `scontrol show -o <kind> <name>` as key=value pairs (values may hold spaces only in a
    /// few keys placid does not read).
    pub fn show(&self, kind: &str, name: &str) -> std::collections::BTreeMap<String, String> {
        let text = self.stdout("scontrol", &["show", "-o", kind, name]);
        text.split_whitespace().filter_map(|pair| pair.split_once('=')).map(|(key, value)| (key.to_owned(), value.to_owned())).collect()
    }

    /// Submits a batch job, returning its id.
    pub fn sbatch(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["--parsable", "-o", "/dev/null"];
        all.extend_from_slice(args);
        let output = self.run("sbatch", &all);
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().split(';').next().unwrap_or_default().to_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        }
    }

    /// Submits the batch script `text` (written into the cluster's jobs dir as `name`, so
    /// that a chrooted sbatch reads it too) with extra `args`, returning its id.
    pub fn sbatch_script(&self, name: &str, text: &str, args: &[&str]) -> Result<String, String> {
        std::fs::write(self.path(&format!("jobs/{name}")), text).map_err(|error| error.to_string())?;
        let script = self.inner(&format!("jobs/{name}")).display().to_string();
        self.sbatch(&[args, &[script.as_str()]].concat())
    }

    /// Waits until job `id`'s state is one of `states`; returns the last state seen.
    pub fn wait_job(&self, id: &str, states: &[&str], timeout: Duration) -> String {
        let mut last = String::new();
        wait_until(timeout, || {
            last = self.show("job", id).get("JobState").cloned().unwrap_or_default();
            states.contains(&last.as_str())
        });
        last
    }

    /// Cancels every job and waits until the queue is empty and no node is still busy, so
    /// that the next check starts on an idle cluster. A job that is being requeued when
    /// `scancel` runs escapes it and comes back pending (it then starts behind the next
    /// check's back), so the cancel is repeated until the queue stays empty.
    pub fn cancel_all(&self) {
        let busy_nodes = || {
            let states = self.stdout("sinfo", &["-h", "-N", "-o", "%T"]);
            states.lines().any(|state| ["alloc", "mix", "comp"].iter().any(|busy| state.contains(busy)))
        };
        let idle = wait_until(Duration::from_secs(90), || {
            if !self.stdout("squeue", &["-h"]).trim().is_empty() {
                let _ = self.run("scancel", &["--user=root"]);
                return false;
            }
            !busy_nodes()
        });
        assert!(
            idle,
            "the cluster did not become idle within 90 s:\n{}\n{}",
            self.stdout("squeue", &["-h", "-o", "%i %T %r %P"]),
            self.stdout("sinfo", &["-h", "-N", "-o", "%N %T"])
        );
    }
}

impl Cluster {
    /// Stops the daemon `name` by its pid (TERM, then KILL after 15 s).
    fn stop_daemon(&mut self, name: &str) {
        let Some(position) = self.daemons.iter().position(|(daemon, _)| daemon == name) else { return };
        let (_, mut child) = self.daemons.remove(position);
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        if !wait_until(Duration::from_secs(15), || child.try_wait().is_ok_and(|status| status.is_some())) {
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.daemons.iter().any(|(name, _)| name == "slurmctld") {
            // Let slurmstepd finish the cancelled jobs while slurmd still runs to collect them.
            let _ = self.run("scancel", &["--user=root"]);
            wait_until(Duration::from_secs(20), || self.run("squeue", &["-h"]).stdout.is_empty());
        }
        // Reverse start order: slurmds, slurmctld, slurmdbd, mariadbd, munged.
        while let Some(name) = self.daemons.last().map(|(name, _)| name.clone()) {
            self.stop_daemon(&name);
        }
    }
}

/// The ports one cluster listens on: slurmctld at the base, slurmdbd and MariaDB above it, the
/// slurmds from base + 10, one per node.
const PORTS_PER_CLUSTER: u16 = 40;

/// Where clusters take their ports: above the well-known services, and below Linux's ephemeral
/// range (32768 up by default; [`port_range`] reads the host's), where any client's outgoing
/// connection may hold a port a daemon wants. A slurmd that loses its port to such a
/// connection never registers.
const PORT_RANGE: std::ops::Range<u16> = 10_000..32_000;

/// [`PORT_RANGE`], ending below the host's ephemeral range where that starts lower.
fn port_range() -> std::ops::Range<u16> {
    let ephemeral_start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next().and_then(|first| first.parse::<u16>().ok()))
        .unwrap_or(PORT_RANGE.end);
    PORT_RANGE.start..PORT_RANGE.end.min(ephemeral_start)
}

/// Blocks handed to clusters of this process that are still running (tests start clusters in
/// parallel threads; the bind probe alone would hand two of them one block).
static TAKEN_PORTS: std::sync::Mutex<std::collections::BTreeSet<u16>> = std::sync::Mutex::new(std::collections::BTreeSet::new());

/// [`PORTS_PER_CLUSTER`] consecutive ports that were free when reserved, held by one cluster.
struct PortBlock {
    base: u16,
}

impl PortBlock {
    /// The first block, from a place that depends on the process id (so two test runs on one
    /// host start apart), that no cluster of this process holds and whose every port binds.
    fn reserve() -> Result<PortBlock, StartError> {
        let range = port_range();
        let blocks = (range.end.saturating_sub(range.start) / PORTS_PER_CLUSTER).max(1);
        let first = u16::try_from(std::process::id() % u32::from(blocks)).unwrap_or(0);
        let mut taken = TAKEN_PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let free = (0..blocks)
            .map(|step| range.start + (first + step) % blocks * PORTS_PER_CLUSTER)
            .filter(|base| !taken.contains(base))
            .find(|&base| (base..base + PORTS_PER_CLUSTER).all(|port| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()));
        let base = free.ok_or_else(|| harness(format!("no {PORTS_PER_CLUSTER} free consecutive ports in {range:?}")))?;
        taken.insert(base);
        Ok(PortBlock { base })
    }
}

impl Drop for PortBlock {
    fn drop(&mut self) {
        TAKEN_PORTS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.base);
    }
}

fn hostname() -> String {
    Command::new("hostname")
        .arg("-s")
        .output()
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// Polls `condition` every 200 ms until it holds or `timeout` passes.
pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The daily budget [`cap_p0_for_live`] gives tier P0: (usd)700, which at nvl-a's (usd)3.10 a
/// GPU-hour is the QOS's `GrpTRESMins=gres/gpu=13548` (GPU-minutes). It must hold the example's
/// P0 finetune stage (8 GPUs for 26 h, 12,480): the QOS has `DenyOnLimit`, so a job that alone
/// exceeds the tier's budget is refused at submission (observed on 22.05).
/// [`tier_over_budget_is_held`]'s two 4-GPU jobs of 2,000 minutes (8,000 each) fit one at a
/// time, not together.
pub const LIVE_P0_BUDGET_MINOR: i64 = 70_000;

/// [`LIVE_P0_BUDGET_MINOR`] in the QOS's GPU-minutes.
const LIVE_P0_GPU_MINUTES: i64 = LIVE_P0_BUDGET_MINOR * 60 / 310;

/// Gives tier P0 the small daily budget [`LIVE_P0_BUDGET_MINOR`] (a live run cannot spend the
/// example's amounts). Separate from [`shorten_for_live`], which the conformance runs share,
/// so that their engine outcomes keep the example's budgets.
pub fn cap_p0_for_live(model: &mut Model) {
    let currency = model.project.currency;
    for tier in model.tiers.iter_mut().filter(|tier| tier.name.as_str() == "P0") {
        tier.daily_budget = Some(placid_lang::span::Spanned::new(Money { currency, minor: LIVE_P0_BUDGET_MINOR }, tier.span));
    }
}

/// A tier past its daily budget holds its next job with the QOS reason, whatever the team's
/// own budget says: with [`cap_p0_for_live`], one 4-GPU P0 job of 2,000 minutes runs, a second
/// would take P0 past its budget and pends with the QOS reason `QOSGrpGRESMinutes`, and the
/// same job under P1 (the same team, account and partition) runs, so it is the tier's budget
/// that holds it.
pub fn tier_over_budget_is_held(cluster: &Cluster) {
    let job = |qos: &str| {
        let qos = format!("--qos={qos}");
        cluster.sbatch(&["-A", "vision", &qos, "-p", "nvl-a", "-N", "1", "--gpus-per-node=4", "-t", "2000", "--wrap", "sleep 600"])
    };
    let first = job("p0").expect("first P0 job");
    assert_eq!(cluster.wait_job(&first, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let second = job("p0").expect("second P0 job is queued");
    let other_tier = job("p1").expect("the same job under P1");
    assert_eq!(cluster.wait_job(&other_tier, &["RUNNING"], Duration::from_secs(30)), "RUNNING", "P1 has no tier budget");
    let held = cluster.show("job", &second);
    assert_eq!(held.get("JobState").map(String::as_str), Some("PENDING"), "{held:?}");
    assert_eq!(held.get("Reason").map(String::as_str), Some("QOSGrpGRESMinutes"), "{held:?}");
    let qos = cluster.stdout("sacctmgr", &["-n", "-P", "show", "qos", "where", "name=p0", "format=grptresmins"]);
    assert_eq!(qos.trim(), format!("gres/gpu={LIVE_P0_GPU_MINUTES}"), "the QOS budget read back");
    cluster.cancel_all();
}

/// The cluster example's routes (`policy/routes.kdl`) in job_submit.lua: a vision job tagged
/// `--comment=prod-sla`, naming no QOS or partition, runs under P0's QOS in P0's pool, and
/// accounting keeps its tag once it ended (`AccountingStoreFlags=job_comment`); research, which may not use
/// P0, is refused with the policy's message; `sweep` routes a speech job to P2.
pub fn tags_route_jobs_to_their_tier(cluster: &Cluster) {
    let tagged = |account: &str, tag: &str| {
        let comment = format!("--comment={tag}");
        cluster.sbatch(&["-A", account, &comment, "--gpus=1", "-t", "10", "--wrap", "sleep 600"])
    };
    let prod = tagged("vision", "prod-sla").expect("a prod-sla job of vision");
    assert_eq!(cluster.wait_job(&prod, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let job = cluster.show("job", &prod);
    assert_eq!(job.get("QOS").map(String::as_str), Some("p0"), "{job:?}");
    assert_eq!(job.get("Partition").map(String::as_str), Some("nvl-a"), "{job:?}");
    assert_eq!(job.get("Comment").map(String::as_str), Some("prod-sla"), "{job:?}");
    let refused = tagged("res", "prod-sla").expect_err("research may not use P0");
    assert!(refused.contains("placid: team research may not use tier P0, where tag prod-sla routes its jobs"), "{refused}");
    let sweep = tagged("speech", "sweep").expect("a sweep job of speech");
    assert_eq!(cluster.show("job", &sweep).get("QOS").map(String::as_str), Some("p2"));
    cluster.cancel_all();
    // Accounting keeps the tag: slurmctld sends the comment with the job's end record (on
    // 22.05 sacct showed an empty Comment while the job ran, and the tag once it had ended).
    let comment = || cluster.stdout("sacct", &["-n", "-P", "-X", "-j", &prod, "-o", "comment"]);
    assert!(wait_until(Duration::from_secs(30), || comment().trim() == "prod-sla"), "the tag is not in accounting: {}", comment());
}
