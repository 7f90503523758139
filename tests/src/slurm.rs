//! A real Slurm on one host, started by the tests themselves from Debian's packages: a
//! private munged, optionally MariaDB + slurmdbd, slurmctld, and one slurmd per emulated node
//! (Debian builds Slurm with MULTIPLE_SLURMD, so each node gets its own port on 127.0.0.1, and
//! `SlurmdParameters=config_overrides` lets a small VM claim the inventory's cores and GPUs;
//! gres.conf device files point at /dev/null, which slurmd accepts as a character device).
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

/// Log lines slurmctld prints on a healthy one-host start (missing state files at first
/// start, no PMIx library, VM timer noise, slurmdbd's tuning advice).
const BENIGN_LOG_LINES: &[&str] = &[
    "state file",
    "backup state save",
    "Trying backup",
    "pmix",
    "mpi/pmix",
    "_read_last_decay_ran",
    "Database settings not recommended",
    "High latency for 1000 calls to gettimeofday",
];

/// Why the live tests cannot run here: not root, or a Debian package is missing.
pub fn unavailable_reason(with_accounting: bool) -> Option<String> {
    let uid = Command::new("id").arg("-u").output().ok().map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned());
    if uid.as_deref() != Some("0") {
        return Some("not running as root (the daemons need it)".to_owned());
    }
    let mut programs = vec!["munged", "mungekey", "slurmctld", "slurmd", "scontrol", "sinfo", "sbatch", "squeue", "scancel"];
    if with_accounting {
        programs.extend(["slurmdbd", "sacctmgr", "mariadbd", "mariadb-install-db", "mariadb", "mariadb-admin"]);
    }
    let missing: Vec<&str> = programs.into_iter().filter(|program| which(program).is_none()).collect();
    (!missing.is_empty()).then(|| format!("missing programs {missing:?} (install the packages .ci/run lists)"))
}

fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(["/usr/sbin", "/sbin"].map(PathBuf::from));
    dirs.into_iter().map(|dir| dir.join(program)).find(|candidate| candidate.is_file())
}

/// Under `CI=true` a missing prerequisite fails the test; elsewhere it prints NOT RUN and
/// the test returns early. Returns whether the test should go on.
pub fn should_run(test: &str, with_accounting: bool) -> bool {
    let Some(reason) = unavailable_reason(with_accounting) else { return true };
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{test}: cannot start Slurm: {reason}");
    }
    eprintln!("{test}: NOT RUN: cannot start Slurm: {reason}");
    false
}

/// How to start a cluster.
#[derive(Clone, Debug)]
pub struct Options {
    /// Start MariaDB + slurmdbd and apply `accounts.sh` (twice, to prove it idempotent).
    pub accounting: bool,
    /// Start one slurmd per node and wait until all are idle.
    pub slurmds: bool,
    /// First of 40 consecutive TCP ports this cluster may use.
    pub port_base: u16,
}

/// A running one-host Slurm.
pub struct Cluster {
    root: tempfile::TempDir,
    daemons: Vec<(String, Child)>,
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
        let root = tempfile::Builder::new().prefix("placid-slurm-").tempdir().map_err(|error| harness(error.to_string()))?;
        let mut cluster = Cluster { root, daemons: Vec::new(), nodes: Vec::new(), accounts_runs: Vec::new() };
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
            cluster.start_database(options)?;
            cluster.start_slurmdbd()?;
            cluster.apply_accounts(policy)?;
        }
        cluster.start_slurmctld()?;
        if options.slurmds {
            cluster.start_slurmds()?;
        }
        Ok(cluster)
    }

    /// A path inside the cluster's temp dir.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    fn chmod(&self, relative: &str, mode: &str) -> Result<(), StartError> {
        let status = Command::new("chmod").arg(mode).arg(self.path(relative)).status().map_err(|error| harness(error.to_string()))?;
        if status.success() { Ok(()) } else { Err(harness(format!("chmod {mode} {relative} failed"))) }
    }

    fn conf(&self) -> PathBuf {
        self.path("etc/slurm.conf")
    }

    /// Runs a Slurm client command against this cluster.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        Command::new(program)
            .args(args)
            .env("SLURM_CONF", self.conf())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|error| panic!("cannot run {program}: {error}"))
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

    fn port(options: &Options, offset: u16) -> u16 {
        options.port_base + offset
    }

    /// Writes the site header (which `Include`s the policy part), the localized policy part,
    /// topology.conf, gres.conf and job_submit.lua into `etc/`.
    fn localize(&mut self, policy: &Path, options: &Options) -> Result<(), StartError> {
        let read = |name: &str| std::fs::read_to_string(policy.join(name));
        let conf = read("slurm.conf").map_err(|error| harness(format!("no slurm.conf: {error}")))?;
        let host = hostname();
        let mut node_port = Self::port(options, 10);
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
        let root = self.root.path().display().to_string();
        let mut site = format!(
            "# One-host site part (what an admin's slurm.conf holds); the policy is included below.\n\
             SlurmctldHost={host}(127.0.0.1)\nSlurmctldPort={ctld}\nSlurmdPort={slurmd}\nSlurmUser=root\nSlurmdUser=root\n\
             AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={root}/run/munge.sock\n\
             StateSaveLocation={root}/state\nSlurmdSpoolDir={root}/spool/slurmd-%n\n\
             SlurmctldPidFile={root}/run/slurmctld.pid\nSlurmdPidFile={root}/run/slurmd-%n.pid\n\
             SlurmctldLogFile={root}/log/slurmctld.log\nSlurmdLogFile={root}/log/slurmd-%n.log\n\
             SlurmctldDebug=info\nSlurmdDebug=info\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\nMailProg=/bin/true\nSlurmdParameters=config_overrides\nReturnToService=2\n",
            ctld = Self::port(options, 0),
            slurmd = Self::port(options, 9),
        );
        if options.accounting {
            let _ = write!(
                site,
                "AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\nAccountingStoragePort={}\nAccountingStoragePass={root}/run/munge.sock\n",
                Self::port(options, 1)
            );
        }
        let _ = writeln!(site, "Include {}", etc.join("placid.conf").display());
        write("slurm.conf", &site)?;
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
            write("gres.conf", &gres.replace("File=/dev/", &format!("File={}/", dev.display())))?;
        }
        if options.accounting {
            let slurmdbd = format!(
                "AuthType=auth/munge\nAuthInfo=socket={root}/run/munge.sock\nDbdHost=localhost\nDbdAddr=127.0.0.1\nDbdPort={dbd}\n\
                 SlurmUser=root\nDebugLevel=info\nLogFile={root}/log/slurmdbd.log\nPidFile={root}/run/slurmdbd.pid\n\
                 StorageType=accounting_storage/mysql\nStorageHost=127.0.0.1\nStoragePort={sql}\nStorageUser=slurm\n\
                 StoragePass=placid-test\nStorageLoc=slurm_acct_db\n",
                dbd = Self::port(options, 1),
                sql = Self::port(options, 2),
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
            .env("SLURM_CONF", self.conf())
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
        let key = self.path("munge/munge.key");
        let created = Command::new("mungekey").arg("--create").arg(format!("--keyfile={}", key.display())).output();
        if !created.is_ok_and(|output| output.status.success()) {
            return Err(harness("mungekey --create failed"));
        }
        let socket = self.path("run/munge.sock");
        let args = [
            "-F".to_owned(),
            format!("--key-file={}", key.display()),
            format!("--socket={}", socket.display()),
            format!("--pid-file={}", self.path("run/munged.pid").display()),
            format!("--log-file={}", self.path("log/munged.log").display()),
            format!("--seed-file={}", self.path("munge/seed").display()),
        ];
        self.spawn("munged", Command::new("munged").args(args))?;
        wait_until(Duration::from_secs(10), || socket.exists())
            .then_some(())
            .ok_or_else(|| harness(format!("munged did not start: {}", self.output_of("munged"))))
    }

    fn start_database(&mut self, options: &Options) -> Result<(), StartError> {
        let data = self.path("mysql/data");
        let install = Command::new("mariadb-install-db")
            .args(["--no-defaults", "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
            .arg(format!("--datadir={}", data.display()))
            .output()
            .map_err(|error| harness(error.to_string()))?;
        if !install.status.success() {
            return Err(harness(format!("mariadb-install-db failed: {}", String::from_utf8_lossy(&install.stderr))));
        }
        let socket = self.path("run/mysqld.sock");
        let args = [
            "--no-defaults".to_owned(),
            "--user=root".to_owned(),
            format!("--datadir={}", data.display()),
            format!("--socket={}", socket.display()),
            format!("--port={}", Self::port(options, 2)),
            "--bind-address=127.0.0.1".to_owned(),
            "--skip-name-resolve".to_owned(),
            format!("--pid-file={}", self.path("run/mysqld.pid").display()),
            "--innodb-buffer-pool-size=64M".to_owned(),
        ];
        self.spawn("mariadbd", Command::new("mariadbd").args(args))?;
        let socket_arg = format!("--socket={}", socket.display());
        let ready = wait_until(Duration::from_secs(30), || {
            Command::new("mariadb-admin")
                .args(["--no-defaults", "-uroot", &socket_arg, "ping"])
                .output()
                .is_ok_and(|output| output.status.success())
        });
        if !ready {
            return Err(harness(format!("mariadbd did not start: {}", self.output_of("mariadbd"))));
        }
        let grant = "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'placid-test'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';";
        let output = Command::new("mariadb")
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
        self.spawn("slurmdbd", Command::new("slurmdbd").arg("-D"))?;
        let ready = wait_until(Duration::from_secs(30), || self.run("sacctmgr", &["-n", "show", "cluster"]).status.success());
        ready.then_some(()).ok_or_else(|| harness(format!("slurmdbd did not start: {}", self.output_of("slurmdbd"))))
    }

    /// Applies accounts.sh twice (the second run must change nothing), then lets root submit
    /// as every team: user associations are site data, not policy.
    fn apply_accounts(&mut self, policy: &Path) -> Result<(), StartError> {
        let script = policy.join("accounts.sh");
        for _ in 0..2 {
            let output =
                Command::new("sh").arg(&script).env("SLURM_CONF", self.conf()).output().map_err(|error| harness(error.to_string()))?;
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
        let conf = self.conf();
        // The daemon mode's exit code says nothing (it forks first); -D and polling does.
        self.spawn("slurmctld", Command::new("slurmctld").arg("-D").arg("-f").arg(&conf))?;
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
        let conf = self.conf();
        for node in self.nodes.clone() {
            std::fs::create_dir_all(self.path(&format!("spool/slurmd-{node}"))).map_err(|error| harness(error.to_string()))?;
            self.spawn(&format!("slurmd-{node}"), Command::new("slurmd").arg("-D").arg("-f").arg(&conf).arg("-N").arg(&node))?;
        }
        let ready = wait_until(Duration::from_secs(60), || {
            let idle = String::from_utf8_lossy(&self.run("sinfo", &["-h", "-N", "-t", "idle", "-o", "%N"]).stdout).into_owned();
            let mut idle: Vec<&str> = idle.lines().collect();
            idle.sort_unstable();
            idle.dedup();
            idle.len() >= self.nodes.len()
        });
        ready.then_some(()).ok_or_else(|| harness(format!("not every slurmd became idle:\n{}", self.stdout("sinfo", &["-N"]))))
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

    /// Waits until job `id`'s state is one of `states`; returns the last state seen.
    pub fn wait_job(&self, id: &str, states: &[&str], timeout: Duration) -> String {
        let mut last = String::new();
        wait_until(timeout, || {
            last = self.show("job", id).get("JobState").cloned().unwrap_or_default();
            states.contains(&last.as_str())
        });
        last
    }

    /// Cancels every job and waits until the queue is empty.
    pub fn cancel_all(&self) {
        let _ = self.run("scancel", &["--user=root"]);
        wait_until(Duration::from_secs(30), || self.stdout("squeue", &["-h"]).trim().is_empty());
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
        while let Some((_, mut child)) = self.daemons.pop() {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
            let stopped = wait_until(Duration::from_secs(15), || child.try_wait().is_ok_and(|status| status.is_some()));
            if !stopped {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
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
