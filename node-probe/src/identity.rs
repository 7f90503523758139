//! Machine identity: the host name, and the board as firmware names it: the devicetree
//! `model`/`compatible` on riscv64 boards, DMI on x86_64 servers (readable fields only; the
//! serials are root-only). Board facts become node labels, sanitised to label values.

use std::collections::BTreeMap;

use placid_lang::diag::Diagnostics;
use placid_lang::name::{LabelKey, is_label_value};

use crate::notes;
use crate::root::Root;

/// The host name the kernel reports, trimmed.
pub fn hostname(root: &Root) -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| root.read(path).ok())
        .map(|text| text.trim().to_owned())
        .filter(|name| !name.is_empty())
}

/// Labels naming the board: `board` (devicetree `model` or DMI `product_name`), `compatible`
/// (the first devicetree `compatible` entry) and `vendor` (DMI `sys_vendor`).
pub fn board_labels(root: &Root, diagnostics: &mut Diagnostics) -> BTreeMap<LabelKey, String> {
    let mut read = |path: &str| match root.read_optional(path) {
        Ok(text) => text,
        Err(error) => {
            diagnostics.push(notes::unreadable(&error));
            None
        }
    };
    // Devicetree string properties are NUL-terminated; `compatible` is a NUL-separated list.
    let first_string = |text: String| text.split('\0').next().map(|first| first.trim().to_owned()).filter(|first| !first.is_empty());
    let board = read("/sys/firmware/devicetree/base/model")
        .and_then(first_string)
        .or_else(|| read("/sys/class/dmi/id/product_name").and_then(first_string));
    let compatible = read("/sys/firmware/devicetree/base/compatible").and_then(first_string);
    let vendor = read("/sys/class/dmi/id/sys_vendor").and_then(first_string);
    let mut labels = BTreeMap::new();
    for (key, value) in [("board", board), ("compatible", compatible), ("vendor", vendor)] {
        if let (Ok(key), Some(value)) = (LabelKey::new(key), value.and_then(|value| label_value(&value))) {
            labels.insert(key, value);
        }
    }
    labels
}

/// A label value for free firmware text: runs of other characters become one `-`, the ends
/// are trimmed to letters or digits, and the length is capped at 63 (Kubernetes' limit).
pub fn label_value(text: &str) -> Option<String> {
    let mut value = String::new();
    for character in text.chars() {
        if character.is_ascii_alphanumeric() || matches!(character, '.' | '_') {
            value.push(character);
        } else if !value.ends_with('-') {
            value.push('-');
        }
    }
    value.truncate(63);
    let trimmed = value.trim_matches(|character: char| !character.is_ascii_alphanumeric()).to_owned();
    is_label_value(&trimmed).then_some(trimmed).filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firmware_text_becomes_a_label_value() {
        assert_eq!(label_value("SiFive HiFive Unmatched A00").as_deref(), Some("SiFive-HiFive-Unmatched-A00"));
        assert_eq!(label_value("sifive,hifive-unmatched-a00").as_deref(), Some("sifive-hifive-unmatched-a00"));
        assert_eq!(label_value(" (none) ").as_deref(), Some("none"));
        assert_eq!(label_value("!!!"), None);
    }
}
