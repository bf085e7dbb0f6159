//! agents/sf.yaml, the agent seed 004 describes: its system prompt has the seed's five sections in the seed's
//! order, reads its files from .sf/ and the SF_AGENT_DIR agent directory, and ends with the seeds' date and
//! time line.

use super::{MODEL_ARGS, server};
use pi_gen_tests::{Sandbox, agent_binary, stderr};

const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// `Saturday, March 7, 2026 at 08:55:05 AM CST`, checked piece by piece.
fn assert_seed_date_time(text: &str) {
    let (weekday, rest) = text.split_once(", ").unwrap_or_else(|| panic!("no weekday: {text}"));
    assert!(WEEKDAYS.contains(&weekday), "{text}");
    let (month_day, rest) = rest.split_once(", ").unwrap_or_else(|| panic!("no month and day: {text}"));
    let (month, day) = month_day.split_once(' ').unwrap_or_else(|| panic!("no day: {text}"));
    assert!(MONTHS.contains(&month) && day.parse::<u32>().is_ok_and(|day| (1..=31).contains(&day)), "{text}");
    let parts: Vec<&str> = rest.split(' ').collect();
    assert_eq!(parts.len(), 5, "year at time half zone: {text}");
    assert!(parts[0].len() == 4 && parts[0].parse::<u32>().is_ok(), "{text}");
    assert_eq!(parts[1], "at", "{text}");
    let clock: Vec<&str> = parts[2].split(':').collect();
    assert!(clock.len() == 3 && clock.iter().all(|part| part.len() == 2 && part.parse::<u32>().is_ok()), "{text}");
    assert!(parts[3] == "AM" || parts[3] == "PM", "{text}");
    assert!(!parts[4].is_empty(), "{text}");
}

/// Where each of `needles` starts in `text`, asserting that they come in this order.
fn assert_in_order(text: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        let found =
            text[from..].find(needle).unwrap_or_else(|| panic!("`{needle}` missing or out of order in:\n{text}"));
        from += found + needle.len();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sf_builds_seed_004s_prompt_from_its_own_files() {
    let binary = agent_binary("sf");
    let mock = server(r#"{"responses": [{"text": "Contract first."}, {"text": "Custom base used."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let agent_dir = sandbox.agent_dir();
    std::fs::write(agent_dir.join("AGENTS.md"), "Global rule.").expect("global AGENTS.md");
    std::fs::write(agent_dir.join("APPEND_SYSTEM.md"), "Appended rule.").expect("APPEND_SYSTEM.md");
    sandbox.write("AGENTS.md", "Project rule.");
    let env = [("SF_AGENT_DIR", agent_dir.to_str().expect("utf-8"))];
    let output = sandbox.run_env(&binary, &[&MODEL_ARGS[..], &["-p", "Add a flag"]].concat(), &env).await;
    assert!(output.status.success(), "{}", stderr(&output));

    // Written into .sf/ of the project, SYSTEM.md replaces the base; the rest stays.
    sandbox.write(".sf/SYSTEM.md", "You are a custom base.");
    let output = sandbox.run_env(&binary, &[&MODEL_ARGS[..], &["-p", "Again"]].concat(), &env).await;
    assert!(output.status.success(), "{}", stderr(&output));

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let prompt =
        |index: usize| requests[index].body["messages"][0]["content"].as_str().expect("system text").to_owned();
    let work = sandbox.work_dir();
    let global_agents = format!("## {}", agent_dir.join("AGENTS.md").display());
    let project_agents = format!("## {}", work.join("AGENTS.md").display());
    let first = prompt(0);
    assert!(first.starts_with("You are a purpose-driven software compiler. You take bounded intent"), "{first}");
    assert_in_order(
        &first,
        &[
            "Available tools:\n- read: ",
            "\n- bash: ",
            "\n- edit: ",
            "\n- write: ",
            "Guidelines:\n",
            "\n\nAppended rule.",
            "# Project Context",
            &global_agents,
            "Global rule.",
            &project_agents,
            "Project rule.",
            "<available_skills>",
            "<name>purpose-contract</name>",
            "</available_skills>",
            "\nCurrent date and time: ",
        ],
    );
    let lines: Vec<&str> = first.lines().collect();
    let date = lines[lines.len() - 2].strip_prefix("Current date and time: ").expect("the date line before the last");
    assert_seed_date_time(date);
    assert_eq!(lines[lines.len() - 1], format!("Current working directory: {}", work.display()));

    let second = prompt(1);
    assert!(second.starts_with("You are a custom base.\n\nAppended rule."), "{second}");
    assert!(!second.contains("Available tools:") && !second.contains("purpose-driven"), "{second}");
    assert_in_order(
        &second,
        &["# Project Context", "Project rule.", "<available_skills>", "\nCurrent date and time: "],
    );
}
