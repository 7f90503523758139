//! Totals of user numbers are exact or reported, never wrapped: each case here passed its
//! check with a wrapped total before the sums were widened or checked.

use placid_lang::diag::Code;

/// The codes of the errors `check` (after lowering) reports for one inventory and policy.
fn errors(inventory: &str, policy: &str) -> Vec<Code> {
    crate::testing::error_codes("", inventory, policy)
}

/// One node with `gpus` GPUs, priced at `price` (a KDL amount) per GPU-hour.
fn node(name: &str, gpus: usize, price: &str) -> String {
    let lines: String = (0..gpus).map(|index| format!("    gpu {index} model=\"H200\"\n")).collect();
    format!("node \"{name}\" arch=\"x86_64\" {{\n    cost gpu-hour=(usd){price}\n{lines}}}\n")
}

#[test]
fn reservations_adding_up_past_u32_exceed_their_pool() {
    // 21,846 reservations of the whole 196,608-GPU pool (three nodes of 65,536): 2^32 +
    // 131,072 GPUs, which a u32 sum wrapped to 131,072, inside the pool, so E022 passed. (Few
    // enough lines for a policy file's 1 MiB.)
    let per_node = 1 << 16;
    let pool = 3 * per_node;
    let count = (1u64 << 32) / pool as u64 + 1;
    let reserves: String = (0..count).map(|_| format!("    reserve pool=\"all\" gpus={pool}\n")).collect();
    let policy =
        format!("pool \"all\" {{ select arch=\"x86_64\" }}\ntier \"t\" {{\n    priority 1\n    preemption \"never\"\n{reserves}}}\n");
    let inventory: String = (1..=3).map(|index| node(&format!("n{index}"), per_node, "1")).collect();
    assert_eq!(errors(&inventory, &policy), [Code::ReservationsExceedPool]);
}

/// A cost center with a budget of `center`, and `teams` teams of `each` a day.
fn budgets(center: &str, teams: usize, each: &str) -> String {
    let teams: String = (0..teams)
        .map(|index| {
            format!("team \"t{index}\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n    budget daily=(usd){each}\n}}\n")
        })
        .collect();
    format!(
        "pool \"all\" {{ select arch=\"x86_64\" }}\ntier \"t\" {{\n    priority 1\n    preemption window=\"1m\" mode=\"cancel\"\n}}\ncost-center \"cc\" {{ budget daily=(usd){center} }}\n{teams}"
    )
}

#[test]
fn team_budgets_near_the_i64_limit_are_refused() {
    // Two budgets of i64::MAX cents summed to -2 cents, below the cost center's budget.
    let policy = budgets("92233720368547758.07", 2, "92233720368547758.07");
    assert!(errors(&node("n1", 1, "1"), &policy).contains(&Code::InvalidUnit));
}

#[test]
fn team_budgets_adding_up_past_i64_are_an_overflow() {
    // 93 budgets at the largest amount pass i64::MAX together; the wrapped sum was negative.
    let policy = budgets("1000000000000000", 93, "1000000000000000");
    assert_eq!(errors(&node("n1", 1, "1"), &policy), [Code::ValueOverflow]);
    let fits = budgets("1000000000000000", 9, "100000000000000");
    assert_eq!(errors(&node("n1", 1, "1"), &fits), []);
}

#[test]
fn reservation_costs_past_i64_are_an_overflow() {
    // 4 GPUs at the largest price cost 4 x 10^17 x 24 cents a day, past i64: the cost
    // saturated at i64::MAX cents, a figure nobody wrote, which a budget of as many cents
    // (accepted then) let pass.
    let policy = "pool \"all\" { select arch=\"x86_64\" }\ncost-center \"cc\" { budget daily=(usd)1000000000000000 }\ntier \"t\" {\n    priority 1\n    preemption \"never\"\n    reserve pool=\"all\" gpus=4\n    cost-center \"cc\"\n}\n";
    assert_eq!(errors(&node("n1", 4, "1000000000000000"), policy), [Code::ValueOverflow]);
}

#[test]
fn host_memory_past_16_eib_is_an_overflow() {
    let big = "node \"a\" arch=\"x86_64\" {\n    memory \"16000000TiB\"\n}\nnode \"b\" arch=\"x86_64\" {\n    memory \"16000000TiB\"\n}\n";
    assert_eq!(errors(big, "pool \"all\" { select arch=\"x86_64\" }\n"), [Code::ValueOverflow]);
}

#[test]
fn nvlink_bandwidth_past_u64_is_an_overflow() {
    let link = "nvlink peer=1 bandwidth=\"2000000TB/s\"";
    let inventory = format!(
        "node \"a\" arch=\"x86_64\" nvlink-domain=\"d\" {{\n    gpu 0 model=\"H200\" {{\n        {link}\n        {link}\n    }}\n    gpu 1 model=\"H200\" {{\n        nvlink peer=0 bandwidth=\"1GB/s\"\n    }}\n}}\n"
    );
    let policy = "pool \"all\" { select arch=\"x86_64\" }\nclass \"c\" {\n    nvlink \"required\"\n}\ntier \"t\" {\n    priority 1\n    preemption window=\"1m\" mode=\"cancel\"\n}\ncost-center \"cc\"\nteam \"v\" {\n    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n}\nplan \"p\" team=\"v\" {\n    stage \"s\" tier=\"t\" class=\"c\" pool=\"all\" gpus=1\n}\n";
    assert_eq!(errors(&inventory, policy), [Code::ValueOverflow]);
}
