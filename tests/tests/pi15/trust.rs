//! pi 1.5's project trust without a terminal: a folder's own files (settings, prompt templates, skills,
//! APPEND_SYSTEM.md) are left out unless `--approve`, a saved decision or `defaultProjectTrust` lets them in;
//! at level 0.73 they are always used.

use super::*;

/// The project's files, each leaving a mark the request shows when it is used.
const PROJECT_FILES: [(&str, &str); 4] = [
    (".pi/APPEND_SYSTEM.md", "APPEND-MARK from the project.\n"),
    (".pi/prompts/greet.md", "---\ndescription: greets\n---\nTEMPLATE-MARK, please greet.\n"),
    (".pi/skills/tidy/SKILL.md", "---\nname: tidy\ndescription: SKILL-MARK tidies things\n---\nTidy.\n"),
    (".pi/settings.json", r#"{"prompts": ["extra"]}"#),
];

/// What one run sent: whether the project's prompt additions, template and skill were in it.
#[derive(Debug, PartialEq, Eq)]
struct Used {
    append: bool,
    template: bool,
    skill: bool,
    settings: bool,
}

async fn run(extra: &[&str], agent_settings: Option<&str>, trust_file: Option<&str>) -> Used {
    let mock = server(r#"{"responses": [{"text": "ok"}, {"text": "ok"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    for (path, content) in PROJECT_FILES {
        sandbox.write(path, content);
    }
    // A template reachable only through the project's settings (`prompts: ["extra"]`).
    sandbox.write(".pi/extra/shout.md", "---\ndescription: shouts\n---\nSETTINGS-MARK\n");
    if let Some(settings) = agent_settings {
        std::fs::write(sandbox.agent_dir().join("settings.json"), settings).expect("settings");
    }
    if let Some(text) = trust_file {
        let work = std::fs::canonicalize(sandbox.work_dir()).expect("work dir");
        let text = text.replace("WORK", &work.display().to_string());
        std::fs::write(sandbox.agent_dir().join("trust.json"), text).expect("trust.json");
    }
    let binary = agent_binary("pi");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], extra, &["-p", "/greet", "/shout"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let bodies: Vec<String> = mock.requests().iter().map(|request| request.body.to_string()).collect();
    let all = bodies.join("\n");
    Used {
        append: all.contains("APPEND-MARK"),
        template: all.contains("TEMPLATE-MARK"),
        skill: all.contains("SKILL-MARK"),
        settings: all.contains("SETTINGS-MARK"),
    }
}

const ALL: Used = Used { append: true, template: true, skill: true, settings: true };
const NONE: Used = Used { append: false, template: false, skill: false, settings: false };

#[tokio::test(flavor = "multi_thread")]
async fn an_undecided_folder_is_not_trusted_without_a_terminal_and_flags_decide_for_one_run() {
    assert_eq!(run(&["--pi-compat", "1.5"], None, None).await, NONE);
    assert_eq!(run(&["--pi-compat", "1.5", "-a"], None, None).await, ALL);
    assert_eq!(run(&["--pi-compat", "1.5", "--approve"], None, Some(r#"{"WORK": false}"#)).await, ALL);
    let always = Some(r#"{"defaultProjectTrust": "always"}"#);
    assert_eq!(run(&["--pi-compat", "1.5", "-na"], always, None).await, NONE);
    assert_eq!(run(&["--pi-compat", "0.73"], None, None).await, ALL, "pi 0.73 has no project trust");
}

#[tokio::test(flavor = "multi_thread")]
async fn saved_decisions_and_the_default_setting_apply_in_pis_order() {
    assert_eq!(run(&["--pi-compat", "1.5"], None, Some(r#"{"WORK": true}"#)).await, ALL);
    let never = Some(r#"{"defaultProjectTrust": "never"}"#);
    assert_eq!(run(&["--pi-compat", "1.5"], never, Some(r#"{"WORK": true}"#)).await, ALL, "a saved yes wins");
    let always = Some(r#"{"defaultProjectTrust": "always"}"#);
    assert_eq!(run(&["--pi-compat", "1.5"], always, None).await, ALL);
    assert_eq!(run(&["--pi-compat", "1.5"], always, Some(r#"{"WORK": false}"#)).await, NONE, "a saved no wins");
    // A decision saved for a folder above applies, unless one closer says otherwise.
    assert!(append_used(r#"{"PARENT": true}"#).await);
    assert!(!append_used(r#"{"PARENT": true, "WORK": false}"#).await);
}

/// Whether the project's APPEND_SYSTEM.md reached the model, with a trust file naming the working directory
/// (`WORK`) and its parent (`PARENT`).
async fn append_used(trust: &str) -> bool {
    let mock = server(r#"{"responses": [{"text": "ok"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write(".pi/APPEND_SYSTEM.md", "APPEND-MARK from the project.\n");
    let work = std::fs::canonicalize(sandbox.work_dir()).expect("work dir");
    let parent = work.parent().expect("a parent").display().to_string();
    let text = trust.replace("PARENT", &parent).replace("WORK", &work.display().to_string());
    std::fs::write(sandbox.agent_dir().join("trust.json"), text).expect("trust.json");
    let args = [&MODEL_ARGS[..], &["--pi-compat", "1.5", "-p", "hi"]].concat();
    let output = sandbox.run(&agent_binary("pi"), &args).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    mock.requests()[0].body.to_string().contains("APPEND-MARK")
}
