//! Fuzzes the Kueue history reader (`placid simulate --trace FILE --from kueue`) against the
//! cluster example: any bytes give jobs or diagnostics, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placid_lang::span::FileId;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = placid_simulate::trace::kueue::read(placid_fuzz::checked_cluster(), FileId(1), &text);
});
