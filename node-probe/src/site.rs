//! Site facts a probe cannot discover (rack, chassis, NVLink domain name, capacity kind,
//! price, extra labels): from a small KDL file (`--site FILE`) and command-line flags, flags
//! winning. Every value is validated here, so the printed inventory is always readable.
//!
//! ```kdl
//! name "rv-a-01"
//! rack "r1"
//! chassis "c1"
//! nvlink-domain "nvl-a"
//! capacity "reserved"
//! cost gpu-hour=(usd)3.10 egress-tb=(usd)90
//! label "zone" "a"
//! ```

use std::collections::BTreeMap;

use kdl::KdlValue;
use placid_lang::model::CapacityKind;
use placid_lang::name::{LabelKey, Name, is_label_value};
use placid_lang::units::{Currency, Money};

/// The site facts of one node; every field optional.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Site {
    /// Host name override.
    pub name: Option<Name>,
    /// Rack.
    pub rack: Option<Name>,
    /// Chassis.
    pub chassis: Option<Name>,
    /// NVLink domain name; wins over the fabric id NVML reports.
    pub nvlink_domain: Option<Name>,
    /// Capacity kind.
    pub capacity: Option<CapacityKind>,
    /// Price per GPU-hour.
    pub cost_per_gpu_hour: Option<Money>,
    /// Price per TB of egress.
    pub cost_per_egress_tb: Option<Money>,
    /// Extra labels.
    pub labels: BTreeMap<LabelKey, String>,
}

impl Site {
    /// Reads a site file. Returns a message naming the bad line otherwise.
    pub fn parse(text: &str) -> Result<Site, String> {
        // lang's parse: its nesting pre-scan keeps a hostile site file from overflowing the stack.
        let (document, diagnostics) = placid_lang::syntax::parse(placid_lang::span::FileId(0), text);
        if let Some(first) = diagnostics.iter().next() {
            return Err(format!("not valid KDL 2.0: {}", first.message));
        }
        let mut site = Site::default();
        for node in document.nodes() {
            let key = node.name().value();
            let args: Vec<&KdlValue> = node.entries().iter().filter(|entry| entry.name().is_none()).map(|entry| entry.value()).collect();
            let text_arg = |index: usize| -> Result<&str, String> {
                args.get(index).and_then(|value| value.as_string()).ok_or_else(|| format!("`{key}` needs a quoted string argument"))
            };
            match key {
                "name" => site.name = Some(Name::new(text_arg(0)?)?),
                "rack" => site.rack = Some(Name::new(text_arg(0)?)?),
                "chassis" => site.chassis = Some(Name::new(text_arg(0)?)?),
                "nvlink-domain" => site.nvlink_domain = Some(Name::new(text_arg(0)?)?),
                "capacity" => site.capacity = Some(capacity(text_arg(0)?)?),
                "cost" => {
                    if node.entries().is_empty() {
                        return Err("`cost` needs gpu-hour=(usd)3.10, egress-tb=(usd)90 or both".to_owned());
                    }
                    for entry in node.entries() {
                        let key = entry.name().map(|name| name.value());
                        let slot = match key {
                            Some("gpu-hour") => &mut site.cost_per_gpu_hour,
                            Some("egress-tb") => &mut site.cost_per_egress_tb,
                            _ => return Err("`cost` takes only gpu-hour= and egress-tb=".to_owned()),
                        };
                        let key = key.unwrap_or_default();
                        if slot.is_some() {
                            return Err(format!("`{key}` is given twice"));
                        }
                        *slot = Some(price(key, entry)?);
                    }
                }
                "label" => {
                    let (key, value) = label(text_arg(0)?, text_arg(1)?)?;
                    site.labels.insert(key, value);
                }
                other => {
                    return Err(format!(
                        "unknown site setting `{}`; known: name, rack, chassis, nvlink-domain, capacity, cost, label",
                        other.escape_debug()
                    ));
                }
            }
        }
        Ok(site)
    }

    /// Overlays `other` on `self`: every value `other` has wins.
    pub fn overlay(mut self, other: Site) -> Site {
        self.name = other.name.or(self.name);
        self.rack = other.rack.or(self.rack);
        self.chassis = other.chassis.or(self.chassis);
        self.nvlink_domain = other.nvlink_domain.or(self.nvlink_domain);
        self.capacity = other.capacity.or(self.capacity);
        self.cost_per_gpu_hour = other.cost_per_gpu_hour.or(self.cost_per_gpu_hour);
        self.cost_per_egress_tb = other.cost_per_egress_tb.or(self.cost_per_egress_tb);
        self.labels.extend(other.labels);
        self
    }
}

/// The price in `key=(usd)3.10`.
fn price(key: &str, entry: &kdl::KdlEntry) -> Result<Money, String> {
    let currency =
        entry.ty().map(|ty| ty.value()).and_then(Currency::parse).ok_or_else(|| format!("`{key}` needs a currency, such as (usd)3.10"))?;
    let amount = match entry.value() {
        KdlValue::Integer(value) => value.to_string(),
        KdlValue::Float(value) => value.to_string(),
        _ => return Err(format!("`{key}` is a number, such as (usd)3.10")),
    };
    Money::parse(currency, &amount).map_err(|error| error.message)
}

/// A capacity keyword.
pub fn capacity(text: &str) -> Result<CapacityKind, String> {
    CapacityKind::parse(text).ok_or_else(|| format!("unknown capacity `{}`; use reserved, on-demand or spot", text.escape_debug()))
}

/// A validated label.
pub fn label(key: &str, value: &str) -> Result<(LabelKey, String), String> {
    let key = LabelKey::new(key)?;
    if !is_label_value(value) {
        return Err(format!("`{}` is not a valid label value", value.escape_debug()));
    }
    Ok((key, value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_setting() {
        let site = Site::parse(
            "name \"rv-a-01\"\nrack \"r1\"\nchassis \"c1\"\nnvlink-domain \"nvl-a\"\ncapacity \"reserved\"\ncost gpu-hour=(usd)3.10 egress-tb=(usd)90\nlabel \"zone\" \"a\"\n",
        );
        let site = site.unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(site.rack.as_ref().map(Name::as_str), Some("r1"));
        assert_eq!(site.capacity, Some(CapacityKind::Reserved));
        assert_eq!(site.cost_per_gpu_hour, Some(Money { currency: Currency::Usd, minor: 310 }));
        assert_eq!(site.cost_per_egress_tb, Some(Money { currency: Currency::Usd, minor: 9000 }));
        assert_eq!(site.labels.len(), 1);
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let text = "a {".repeat(2000);
        let error = Site::parse(&text).unwrap_err();
        assert!(error.contains("nest"), "{error}");
    }

    #[test]
    fn refuses_bad_values() {
        for text in [
            "rack \"r 1\"",
            "capacity \"cheap\"",
            "cost gpu-hour=3",
            "cost",
            "cost (usd)3",
            "cost gpu-hour=(usd)3 egress=(usd)1",
            "cost egress-tb=\"90\"",
            "cost gpu-hour=(usd)1 gpu-hour=(usd)2",
            "cost gpu-hour=(usd)1\ncost gpu-hour=(usd)2",
            "label \"zone\" \"a b\"",
            "racks \"r1\"",
            "rack",
        ] {
            assert!(Site::parse(text).is_err(), "{text}");
        }
    }
}
