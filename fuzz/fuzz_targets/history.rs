//! Fuzzes the reader of a recorded telemetry series, the history `placid simulate
//! --telemetry` replays, against the cluster example's `telemetry` block: any bytes give a
//! series or diagnostics, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placid_lang::span::FileId;

fuzz_target!(|data: &[u8]| {
    let model = placid_fuzz::cluster();
    let Some(settings) = &model.telemetry else { return };
    let text = String::from_utf8_lossy(data);
    if let Ok(recorded) = placid_engine::telemetry::Recorded::read(model, settings, FileId(1), &text) {
        let _ = recorded.changes();
    }
});
