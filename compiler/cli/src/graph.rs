//! `placid graph`: the topology (racks, NVLink domains, nodes, GPUs, NVLink edges) or the plan
//! DAGs as Graphviz DOT, and as SVG when Graphviz's `dot` is installed.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use placid_lang::model::Model;

use placid_check::topology::{Edge, Topology, Vertex};
use placid_driver::build::Selection;
use placid_lang::diag::{Code, Diagnostic};
use placid_lang::span::Span;

use crate::pipeline;
use crate::{Exit, Output, ProjectArgs};

/// Which graph to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Racks, NVLink domains, nodes, GPUs and NVLink links.
    Topology,
    /// Every plan's stages and their `after` dependencies.
    Plans,
}

/// Arguments of `placid graph`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    project: ProjectArgs,
    /// The graph to draw.
    #[arg(long, value_enum, default_value_t = Kind::Topology)]
    kind: Kind,
    /// Render SVG with Graphviz `dot` instead of printing DOT.
    #[arg(long)]
    svg: bool,
}

pub fn run(args: &Args, out: &mut Output) -> Exit {
    let build = match pipeline::checked(out, &args.project, &Selection::default()) {
        Ok(build) => build,
        Err(exit) => return exit,
    };
    let dot = match args.kind {
        Kind::Topology => topology_dot(&build.model),
        Kind::Plans => plans_dot(&build.model),
    };
    if !args.svg {
        out.out(dot);
        return Exit::Ok;
    }
    match render_svg(&dot) {
        Ok(svg) => {
            out.out(svg);
            Exit::Ok
        }
        Err(error) => {
            let diagnostic = Diagnostic::error(Code::EnvironmentUnavailable, Span::DETACHED, format!("cannot run Graphviz `dot`: {error}"))
                .help("install graphviz, or drop --svg to get DOT");
            pipeline::fail(out, args.project.format, diagnostic)
        }
    }
}

fn render_svg(dot: &str) -> std::io::Result<Vec<u8>> {
    let mut child = Command::new("dot").arg("-Tsvg").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(dot.as_bytes())?;
    }
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err(std::io::Error::other(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    Ok(output.stdout)
}

/// A DOT string literal. Names are validated (no quotes or control characters) but escaping
/// here keeps DOT output safe whatever reaches it.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The topology graph as DOT, from the same petgraph graph the checker uses.
pub fn topology_dot(model: &Model) -> String {
    let topology = Topology::new(model);
    let graph = &topology.graph;
    let mut out = String::from("graph topology {\n    rankdir=LR;\n    node [fontname=\"Helvetica\"];\n");
    for index in graph.node_indices() {
        let (label, shape) = match &graph[index] {
            Vertex::Rack(name) => (format!("rack {name}"), "box3d"),
            Vertex::Domain(name) => (format!("NVLink {name}"), "hexagon"),
            Vertex::Node(id) => {
                let node = model.node(*id);
                (format!("{} ({}, {})", node.name, node.arch.as_str(), node.capacity.as_str()), "box")
            }
            Vertex::Gpu(id, gpu) => {
                let node = model.node(*id);
                let gpu_model =
                    node.gpus.iter().find(|candidate| candidate.index == *gpu).map(|candidate| candidate.model.as_str()).unwrap_or("?");
                (format!("GPU {gpu} {gpu_model}"), "ellipse")
            }
        };
        let _ = writeln!(out, "    n{} [label={}, shape={shape}];", index.index(), quoted(&label));
    }
    for edge in graph.edge_indices() {
        let Some((from, to)) = graph.edge_endpoints(edge) else { continue };
        let attributes = match graph[edge] {
            Edge::Contains => String::new(),
            Edge::Nvlink(links) => format!(" [label={}, color=green, penwidth=2]", quoted(&format!("{links}x NVLink"))),
        };
        let _ = writeln!(out, "    n{} -- n{}{attributes};", from.index(), to.index());
    }
    out.push_str("}\n");
    out
}

/// Every plan as a cluster of stages with `after` edges, as DOT.
pub fn plans_dot(model: &Model) -> String {
    let mut out = String::from("digraph plans {\n    node [shape=box, fontname=\"Helvetica\"];\n");
    for (plan_index, plan) in model.plans.iter().enumerate() {
        let _ = writeln!(out, "    subgraph cluster_{plan_index} {{");
        let _ = writeln!(out, "        label={};", quoted(&format!("plan {} (team {})", plan.name, model.team(plan.team.value).name)));
        for (stage_index, stage) in plan.stages.iter().enumerate() {
            let label = format!(
                "{}\\n{} x {} GPUs\\ntier {} in {}",
                stage.name,
                stage.trials,
                stage.gpus.value,
                model.tier(stage.tier.value).name,
                model.pool(stage.pool.value).name
            );
            let _ = writeln!(out, "        p{plan_index}s{stage_index} [label=\"{label}\"];");
            for after in &stage.after {
                let _ = writeln!(out, "        p{plan_index}s{} -> p{plan_index}s{stage_index};", after.value);
            }
        }
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    out
}
