//! Fuzzes the parser and lowering with an arbitrary project file and an arbitrary policy
//! file: nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placid_lang::source::MemoryWorld;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (project, policy) = text.split_at(text.find('\u{1}').unwrap_or(text.len()));
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", format!("project \"fuzz\"\ninclude \"p/*.kdl\"\ninventory \"i/*.kdl\"\n{project}"));
    world.insert("p/policy.kdl", policy.trim_start_matches('\u{1}').to_owned());
    world.insert(
        "i/nodes.kdl",
        "node \"n1\" arch=\"riscv64\" nvlink-domain=\"d\" { cpu harts=4; gpu 0 model=\"H200\" { nvlink peer=1 bandwidth=\"300GB/s\" }; gpu 1 model=\"H200\" }\n",
    );
    let _ = placid_lang::load(&world);
    let _ = placid_lang::format::format(placid_lang::span::FileId(0), &text);
});
