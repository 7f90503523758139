//! The `placid-probe` command line: flags to a [`Site`] and a root, one probe run, the node
//! printed as KDL or JSON on stdout (or to `-o FILE`), diagnostics on stderr. Exit 0 when a
//! node was written (warnings included), 2 when it could not be (no name, no architecture,
//! bad flags or site file).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use placid_lang::name::Name;
use placid_lang::units::{Currency, Money};
use placid_probe::exporter::{self, Identity};
use placid_probe::nvml::{GpuSource, GpuTelemetry, NvmlGpu, Unavailable};
use placid_probe::root::Root;
use placid_probe::site::{self, Site};
use placid_probe::{Probe, notes, probe, sample_nvlink};

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The KDL inventory format.
    Kdl,
    /// The JSON form of the inventory.
    Json,
}

/// placid-probe: prints this node's inventory (CPU, NUMA, memory, GPUs, NVLink) for placid.
#[derive(Parser, Debug)]
#[command(name = "placid-probe", version, about)]
struct Cli {
    /// Read /proc and /sys below this directory instead of / (NVML is then not asked).
    #[arg(long, default_value = "/")]
    root: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Kdl)]
    format: Format,
    /// Write the inventory here instead of stdout.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Site file with what a probe cannot know (rack, chassis, nvlink-domain, capacity, cost, labels).
    #[arg(long)]
    site: Option<PathBuf>,
    /// Node name (default: the host name).
    #[arg(long)]
    name: Option<String>,
    /// Rack.
    #[arg(long)]
    rack: Option<String>,
    /// Chassis (NVLink tray, blade enclosure).
    #[arg(long)]
    chassis: Option<String>,
    /// NVLink domain name (default: the GPU fabric's `<cluster-uuid>.<clique-id>`).
    #[arg(long)]
    nvlink_domain: Option<String>,
    /// Capacity kind: reserved, on-demand or spot.
    #[arg(long)]
    capacity: Option<String>,
    /// Price of one GPU-hour, such as `(usd)3.10`.
    #[arg(long)]
    cost_gpu_hour: Option<String>,
    /// Price of one TB of egress, such as `(usd)90`.
    #[arg(long)]
    cost_egress_tb: Option<String>,
    /// Extra label `KEY=VALUE` (repeatable).
    #[arg(long = "label")]
    labels: Vec<String>,
    /// Do not ask NVML even on a live system.
    #[arg(long)]
    no_nvml: bool,
    /// Sample NVLink throughput over this window (`5s`) and report it on stderr.
    #[arg(long)]
    sample: Option<String>,
    /// Serve this node's GPU and NVLink metrics for Prometheus on ADDR (`0.0.0.0:9847`),
    /// `GET /metrics`, until interrupted, instead of printing the inventory.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["output", "sample", "format"])]
    serve: Option<String>,
}

/// Used when NVML must not or cannot be asked.
struct NoNvml(String);

impl GpuSource for NoNvml {
    fn gpus(&self) -> Result<Vec<NvmlGpu>, Unavailable> {
        Err(Unavailable { reason: self.0.clone() })
    }
    fn link_traffic(&self, _gpu: u32, _link: u32) -> Option<(u64, u64)> {
        None
    }
    fn telemetry(&self, _gpu: u32) -> Option<GpuTelemetry> {
        None
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(message) => {
            note(&format!("error: {message}\n"));
            ExitCode::from(2)
        }
    }
}

/// Writes to stderr. `eprint!` panics when stderr is closed; a note nobody reads is no error.
fn note(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Writes the inventory to stdout. A closed pipe (`placid-probe | head -1`) ends the probe
/// quietly, where `print!` would panic; any other failure is an error.
fn print_inventory(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("cannot write the inventory: {error}")),
        _ => Ok(()),
    }
}

/// Writes `-o FILE` whole or not at all: a temporary file beside it, renamed over it, so a
/// failed or killed probe never leaves a half-written inventory for `placid check` to read.
fn write_file(path: &std::path::Path, text: &str) -> Result<(), String> {
    let error = |error: std::io::Error| format!("cannot write {}: {error}", path.display());
    let name = path.file_name().ok_or_else(|| format!("cannot write {}: not a file name", path.display()))?;
    let temp = path.with_file_name(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    let written = std::fs::File::create_new(&temp)
        .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(error)
}

fn run(cli: &Cli) -> Result<ExitCode, String> {
    let site = site_of(cli)?;
    let window = cli
        .sample
        .as_deref()
        .map(|text| {
            placid_lang::units::Duration::parse(text).map(|duration| Duration::from_secs(duration.seconds)).map_err(|error| error.message)
        })
        .transpose()?;
    let root = Root::new(&cli.root);
    let source: Arc<dyn GpuSource + Send + Sync> = if !root.is_live() {
        Arc::new(NoNvml("--root reads a captured tree; NVML describes only the live host".to_owned()))
    } else if cli.no_nvml {
        Arc::new(NoNvml("--no-nvml".to_owned()))
    } else {
        match placid_probe::nvml::real::Nvml::open() {
            Ok(nvml) => Arc::new(nvml),
            Err(unavailable) => {
                live_nvml_unavailable(&unavailable);
                Arc::new(NoNvml(unavailable.reason))
            }
        }
    };
    let result = probe(&root, site, source.as_ref());
    note(&notes::render(&result.diagnostics));
    if result.entry.is_none() {
        return Ok(ExitCode::from(2));
    }
    if let Some(address) = &cli.serve {
        return serve(address, source, &result);
    }
    let model = result.model();
    let text = match cli.format {
        Format::Kdl => placid_lang::print::inventory_kdl(&model),
        Format::Json => {
            let mut json = serde_json::to_string_pretty(&placid_lang::print::inventory_json(&model)).map_err(|error| error.to_string())?;
            json.push('\n');
            json
        }
    };
    match &cli.output {
        Some(path) => write_file(path, &text)?,
        None => print_inventory(&text)?,
    }
    if let Some(window) = window {
        for sample in sample_nvlink(source.as_ref(), &result.gpus, window) {
            note(&format!(
                "nvlink gpu {} link {}: tx {:.1} GB/s, rx {:.1} GB/s\n",
                sample.gpu,
                sample.link,
                sample.tx_bytes_per_second / 1e9,
                sample.rx_bytes_per_second / 1e9
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--serve ADDR`: the metrics exporter, labelled with the node's name and NVLink domain
/// as the probe found them (the site file and flags win, as for the inventory).
fn serve(address: &str, source: Arc<dyn GpuSource + Send + Sync>, result: &Probe) -> Result<ExitCode, String> {
    let entry = result.entry.as_ref().ok_or("no node to serve metrics for")?;
    let identity = Identity {
        node: entry.node.name.as_str().to_owned(),
        nvlink_domain: entry.domain.as_ref().map(|domain| domain.value.as_str().to_owned()).unwrap_or_default(),
    };
    let listener = std::net::TcpListener::bind(address).map_err(|error| format!("cannot listen on {address}: {error}"))?;
    note(&format!("serving metrics on http://{address}/metrics\n"));
    let interrupted = async {
        // Without a signal handler the server runs until killed, which is also a way to stop.
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    exporter::serve::serve(listener, source, identity, interrupted).map_err(|error| format!("the metrics server stopped: {error}"))?;
    Ok(ExitCode::SUCCESS)
}

/// NVML missing is normal on CPU-only nodes; say it once, as a note, not as a failure.
fn live_nvml_unavailable(unavailable: &Unavailable) {
    note(&format!("note: NVML not available ({}); GPUs come from PCI sysfs only\n", unavailable.reason));
}

fn site_of(cli: &Cli) -> Result<Site, String> {
    let from_file = match &cli.site {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
            Site::parse(&text).map_err(|error| format!("{}: {error}", path.display()))?
        }
        None => Site::default(),
    };
    let mut flags = Site {
        name: cli.name.as_deref().map(Name::new).transpose()?,
        rack: cli.rack.as_deref().map(Name::new).transpose()?,
        chassis: cli.chassis.as_deref().map(Name::new).transpose()?,
        nvlink_domain: cli.nvlink_domain.as_deref().map(Name::new).transpose()?,
        capacity: cli.capacity.as_deref().map(site::capacity).transpose()?,
        cost_per_gpu_hour: cli.cost_gpu_hour.as_deref().map(money).transpose()?,
        cost_per_egress_tb: cli.cost_egress_tb.as_deref().map(money).transpose()?,
        ..Site::default()
    };
    for label in &cli.labels {
        let (key, value) = label.split_once('=').ok_or_else(|| format!("--label `{}` is not KEY=VALUE", label.escape_debug()))?;
        let (key, value) = site::label(key, value)?;
        flags.labels.insert(key, value);
    }
    Ok(from_file.overlay(flags))
}

/// `(usd)3.10`, the way inventories write money.
fn money(text: &str) -> Result<Money, String> {
    let (currency, amount) = text
        .trim()
        .strip_prefix('(')
        .and_then(|rest| rest.split_once(')'))
        .ok_or_else(|| format!("`{}` is not money; write it like (usd)3.10", text.escape_debug()))?;
    let currency = Currency::parse(currency).ok_or_else(|| format!("unknown currency `{}`", currency.escape_debug()))?;
    Money::parse(currency, amount).map_err(|error| error.message)
}
