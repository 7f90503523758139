//! Issue 18's bar for the exporter: a scrape of an 8-GPU node (18 NVLink links each, as on
//! an HGX H200) under 5 ms without NVML and under 50 ms with recorded NVML answers; and the
//! same recorded scrape through the HTTP server on loopback, as Prometheus sees it.

use std::hint::black_box;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use placid_probe::exporter::{Identity, scrape, serve};
use placid_probe::nvml::recorded::Recorded;
use placid_probe::nvml::{GpuSource, GpuTelemetry, NvmlGpu, Unavailable};

struct NoNvml;

impl GpuSource for NoNvml {
    fn gpus(&self) -> Result<Vec<NvmlGpu>, Unavailable> {
        Err(Unavailable { reason: "no driver".to_owned() })
    }
    fn link_traffic(&self, _gpu: u32, _link: u32) -> Option<(u64, u64)> {
        None
    }
    fn telemetry(&self, _gpu: u32) -> Option<GpuTelemetry> {
        None
    }
}

fn get(address: std::net::SocketAddr) -> usize {
    let Ok(mut stream) = TcpStream::connect(address) else { return 0 };
    let _ = stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n");
    let mut body = Vec::new();
    let _ = stream.read_to_end(&mut body);
    body.len()
}

fn scrapes(c: &mut Criterion) {
    let identity = Identity { node: "hgx-01".to_owned(), nvlink_domain: "nvl-a".to_owned() };
    let recorded = Arc::new(Recorded::hgx(8, 18));
    recorded.add_traffic(1 << 20, 1 << 20);
    c.bench_function("scrape, 8 GPUs, without NVML", |b| b.iter(|| scrape(black_box(&NoNvml), &identity)));
    c.bench_function("scrape, 8 GPUs x 18 links, recorded NVML", |b| b.iter(|| scrape(black_box(recorded.as_ref()), &identity)));

    let Ok(listener) = TcpListener::bind("127.0.0.1:0") else { return println!("did not run: no loopback port") };
    let Ok(address) = listener.local_addr() else { return };
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let source: Arc<dyn GpuSource + Send + Sync> = recorded;
    let server = std::thread::spawn(move || {
        let shutdown = async move {
            let _ = tokio::task::spawn_blocking(move || stopped.recv()).await;
        };
        serve::serve(listener, source, identity, shutdown)
    });
    c.bench_function("GET /metrics over loopback, 8 GPUs x 18 links, recorded NVML", |b| b.iter(|| get(address)));
    let _ = stop.send(());
    let _ = server.join();
}

criterion_group!(benches, scrapes);
criterion_main!(benches);
